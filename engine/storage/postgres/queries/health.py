"""Health read model in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.queries.health import HealthQueries


class PgHealthQueries(HealthQueries):
    pass
