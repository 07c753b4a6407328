"""Audit read model in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.queries.audit import AuditQueries


class PgAuditQueries(AuditQueries):
    pass
