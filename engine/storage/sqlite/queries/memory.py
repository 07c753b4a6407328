"""Memory read model in SQLite's SQL."""

from __future__ import annotations

from engine.storage.queries.memory import MemoryQueries


class SqliteMemoryQueries(MemoryQueries):
    pass
