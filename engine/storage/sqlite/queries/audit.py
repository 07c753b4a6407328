"""Audit read model in SQLite's SQL."""

from __future__ import annotations

from engine.storage.queries.audit import AuditQueries


class SqliteAuditQueries(AuditQueries):
    pass
