"""Memory read model in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.queries.memory import MemoryQueries


class PgMemoryQueries(MemoryQueries):
    pass
