"""What the audit's head anchor asks of the storage layer: the database file a connection has
open (an anchor names it beside the database id, and falls back on it for a file without an id
row). The storage package alone picks the adapter: SQLite reads its database list
(engine/storage/sqlite/audit.py); a server database has no file and answers ""."""

from __future__ import annotations

from typing import Any


def database_path(conn: Any) -> str:
    """The main database's file name as the backend opened it ("" when there is none)."""
    from engine.storage.sqlite.audit import database_path as sqlite_database_path

    return sqlite_database_path(conn)
