"""`sessions` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.sessions import SessionRows


class SqliteSessionRows(SessionRows):
    pass
