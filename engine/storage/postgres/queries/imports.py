"""Import read model in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.queries.imports import ImportQueries


class PgImportQueries(ImportQueries):
    pass
