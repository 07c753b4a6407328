"""`sessions` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.sessions import SessionRows


class PgSessionRows(SessionRows):
    pass
