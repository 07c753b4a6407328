"""`tombstones` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.tombstones import TombstoneRows


class PgTombstoneRows(TombstoneRows):
    pass
