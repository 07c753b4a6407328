"""`memories` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.memories import MemoryRows


class PgMemoryRows(MemoryRows):
    pass
