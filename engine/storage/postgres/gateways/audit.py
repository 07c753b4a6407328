"""`audit` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.audit import AuditRows


class PgAuditRows(AuditRows):
    pass
