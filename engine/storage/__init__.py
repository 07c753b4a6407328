"""The storage port and its adapters. This module alone imports an adapter (import-linter contracts
hold it): `open_storage` chooses one, and what the engine asks of a connection or a file without a
store in hand (the audit chain's place and position, a damaged file's integrity) is sent here to
the adapter that owns it. Services see the `Storage` protocol of engine/storage/port.py and write
portable SQL."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from engine.errors import DatabaseDamaged, EngineError
from engine.storage import tables
from engine.storage import tables as schema  # the shared description: tables, columns, generation
from engine.storage.port import Reconciled, Storage
from engine.storage.sqlite import audit as sqlite_audit
from engine.storage.sqlite.health import file_integrity as sqlite_file_integrity
from engine.storage.sqlite.store import Error as DatabaseError  # the driver's error base class
from engine.storage.sqlite.store import Store

__all__ = [
    "DatabaseDamaged",
    "database_path",
    "database_place",
    "file_integrity",
    "lock_chain",
    "position_column",
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


# What the audit chain asks of the storage layer, by the connection a read or write function got:
# the database file it has open (an anchor names it), where the database lives as a writer of its
# rows cannot change it (its place and instance: a file's path and inode, a server database's
# address and oid), which column orders the chain (its position), and the chain's lock. Each
# adapter answers in its audit.py (engine/storage/sqlite/audit.py, engine/storage/postgres/audit.py).


def _on_postgres(conn: Any) -> bool:
    # Only a PostgreSQL store makes these connections: before its adapter is loaded there is none.
    pg = sys.modules.get("engine.storage.postgres.connection")
    return pg is not None and isinstance(conn, pg.PgConnection | pg.DirectConnection)


def database_path(conn: Any) -> str:
    """The main database's file name as the backend opened it ("" when there is none)."""
    return sqlite_audit.database_path(conn)


def database_place(conn: Any) -> tuple[str, str] | None:
    """(place, instance): where the database lives and which database is there now; None for an
    in-memory one. A new database made at the same place is another instance."""
    if _on_postgres(conn):
        from engine.storage.postgres import audit as pg_audit

        return pg_audit.database_place(conn)
    return sqlite_audit.database_place(conn)


def position_column(conn: Any) -> str:
    """The column that orders the chain without gaps: `id` on SQLite (one writer, AUTOINCREMENT,
    a rolled-back insert gives its id back); `seq` on PostgreSQL, assigned inside the writing
    transaction (a sequence value is taken at insert, so a rolled-back insert leaves an id gap)."""
    return "seq" if _on_postgres(conn) else "id"


def lock_chain(conn: Any) -> None:
    """Hold the chain's head for the rest of the writing transaction: the next append reads the
    head this one commits. SQLite's writer already holds the whole file (BEGIN IMMEDIATE); on
    PostgreSQL a transaction-level advisory lock, so appends stay ordered even where writes of
    other rows run concurrently."""
    if _on_postgres(conn):
        from engine.storage.postgres import audit as pg_audit

        pg_audit.lock_chain(conn)
