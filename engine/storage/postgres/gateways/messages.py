"""`messages` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.messages import MessageRows


class PgMessageRows(MessageRows):
    pass
