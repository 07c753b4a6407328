"""The storage port and its adapters. Only `open_storage` chooses an adapter (an import-linter
contract holds it); services see the `Storage` protocol of engine/storage/port.py and write
portable SQL."""

from __future__ import annotations

import os
from pathlib import Path

from engine.errors import DatabaseDamaged, EngineError
from engine.storage.port import Reconciled, Storage
from engine.storage.sqlite import schema  # the declarative schema: tables, columns, generation
from engine.storage.sqlite.store import Error as DatabaseError  # the driver's error base class
from engine.storage.sqlite.store import Store

__all__ = ["DatabaseDamaged", "DatabaseError", "Reconciled", "Storage", "open_storage", "schema"]


def open_storage(path_or_url: str | os.PathLike, *, readonly: bool = False) -> Storage:
    """The database at `path_or_url`: a SQLite file path (created 0600 if missing), or a
    `postgresql://` URL. The schema is not touched here: the caller reconciles."""
    text = os.fspath(path_or_url)
    if text.startswith(("postgresql://", "postgres://")):
        raise EngineError("PostgreSQL is not supported yet: give a SQLite file path")
    return Store(Path(text), readonly=readonly)
