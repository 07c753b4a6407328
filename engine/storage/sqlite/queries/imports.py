"""Import read model in SQLite's SQL."""

from __future__ import annotations

from engine.storage.queries.imports import ImportQueries


class SqliteImportQueries(ImportQueries):
    pass
