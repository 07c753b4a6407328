"""`messages` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.messages import MessageRows


class SqliteMessageRows(MessageRows):
    pass
