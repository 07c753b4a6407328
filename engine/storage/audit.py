"""What the audit chain asks of the storage layer: the database file a connection has open (an
anchor names it), where the database lives as a writer of its rows cannot change it (its place
and instance: a file's path and inode, a server database's address and oid), and which column
orders the chain (its position). The storage package alone picks the adapter: SQLite
(engine/storage/sqlite/audit.py) or PostgreSQL (engine/storage/postgres/audit.py)."""

from __future__ import annotations

from typing import Any


def _on_postgres(conn: Any) -> bool:
    from engine.storage.postgres.connection import DirectConnection, PgConnection

    return isinstance(conn, PgConnection | DirectConnection)


def database_path(conn: Any) -> str:
    """The main database's file name as the backend opened it ("" when there is none)."""
    from engine.storage.sqlite.audit import database_path as sqlite_database_path

    return sqlite_database_path(conn)


def database_place(conn: Any) -> tuple[str, str] | None:
    """(place, instance): where the database lives and which database is there now; None for an
    in-memory one. A new database made at the same place is another instance."""
    if _on_postgres(conn):
        from engine.storage.postgres.audit import database_place as pg_place

        return pg_place(conn)
    from engine.storage.sqlite.audit import database_place as sqlite_place

    return sqlite_place(conn)


def position_column(conn: Any) -> str:
    """The column that orders the chain without gaps: `id` on SQLite (one writer, AUTOINCREMENT,
    a rolled-back insert gives its id back); `seq` on PostgreSQL, assigned inside the writing
    transaction (a sequence value is taken at insert, so a rolled-back insert leaves an id gap)."""
    return "seq" if _on_postgres(conn) else "id"


CHAIN_LOCK = int.from_bytes(b"MCau", "big")  # the audit chain's own transaction lock on PostgreSQL


def lock_chain(conn: Any) -> None:
    """Hold the chain's head for the rest of the writing transaction: the next append reads the
    head this one commits. SQLite's writer already holds the whole file (BEGIN IMMEDIATE); on
    PostgreSQL a transaction-level advisory lock, so appends stay ordered even where writes of
    other rows run concurrently."""
    if _on_postgres(conn):
        conn.execute(f"SELECT pg_advisory_xact_lock({CHAIN_LOCK})").fetchone()
