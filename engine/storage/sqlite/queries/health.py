"""Health read model in SQLite's SQL."""

from __future__ import annotations

from engine.storage.queries.health import HealthQueries


class SqliteHealthQueries(HealthQueries):
    pass
