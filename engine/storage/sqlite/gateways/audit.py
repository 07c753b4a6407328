"""`audit` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.audit import AuditRows


class SqliteAuditRows(AuditRows):
    pass
