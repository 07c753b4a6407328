"""The storage port and its adapters. This module alone imports an adapter (import-linter contracts
hold it): `open_storage` chooses one, and what the engine asks of a file without a store in hand (a
damaged file's integrity) is sent here to the adapter that owns it. Services see the `Storage`
protocol of engine/storage/port.py and the gateways and read models its connections carry."""

from __future__ import annotations

import os
import re
from pathlib import Path

from engine.errors import DatabaseDamaged, EngineError
from engine.storage import tables
from engine.storage import tables as schema  # the shared description: tables, columns, generation
from engine.storage.operators import OperatorDirectory
from engine.storage.port import Reconciled, Storage
from engine.storage.sqlite.health import file_integrity as sqlite_file_integrity
from engine.storage.sqlite.store import Error as DatabaseError  # the driver's error base class
from engine.storage.sqlite.store import Store

__all__ = [
    "DatabaseDamaged",
    "file_integrity",
    "DatabaseError",
    "Reconciled",
    "Storage",
    "open_storage",
    "postgres_url",
    "schema",
    "tables",
]


def open_storage(path_or_url: str | os.PathLike, *, readonly: bool = False) -> Storage:
    """The database at `path_or_url`: a SQLite file path (created 0600 if missing), or a
    `postgresql://` URL. The schema is not touched here: the caller reconciles."""
    text = os.fspath(path_or_url)
    url = postgres_url(text)
    if url is not None:
        try:
            from engine.storage.postgres.store import PgStore
        except ImportError as exc:
            raise EngineError(f"PostgreSQL needs psycopg, psycopg-pool and pgvector ({exc})") from None
        return PgStore(url, readonly=readonly)
    return Store(Path(text), readonly=readonly)


_MANGLED = re.compile(r"(?:^|/)(postgres(?:ql)?):/(?!/)(.*)$")


def postgres_url(text: str) -> str | None:
    """The `postgresql://` URL in `text`, also when a caller made a path of it (`Path(url)`
    keeps one slash after the scheme, and `.absolute()` puts the working folder in front)."""
    if text.startswith(("postgresql://", "postgres://")):
        return text
    m = _MANGLED.search(text)
    return None if m is None else f"{m.group(1)}://{m.group(2)}"


def file_integrity(path: str | os.PathLike) -> tuple[str | None, list[str]]:
    """For a file too damaged to open as a store (there is no store to ask): (why it cannot be
    opened, or None; the database's own integrity problems), read-only, writing nothing. Only
    the SQLite backend has such a file."""
    return sqlite_file_integrity(path)


def operator_directory(store: Storage) -> OperatorDirectory:
    """The operator directory of `store`'s backend (engine/storage/operators.py)."""
    if isinstance(store, Store):
        from engine.storage.sqlite.operators import FileOperators

        return FileOperators(store.path)
    from engine.storage.postgres.operators import PgOperators

    return PgOperators(store)
