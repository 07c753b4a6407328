"""`tombstones` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.tombstones import TombstoneRows


class SqliteTombstoneRows(TombstoneRows):
    pass
