"""`memories` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.memories import MemoryRows


class SqliteMemoryRows(MemoryRows):
    pass
