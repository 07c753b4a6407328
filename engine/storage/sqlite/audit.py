"""SQLite's side of the audit head anchor: the file a connection has open (`PRAGMA
database_list`), which an anchor records beside the database id and falls back on for a file
without an id row. PostgreSQL has no file: its anchors go by the database id alone."""

from __future__ import annotations

from typing import Any


def database_path(conn: Any) -> str:
    """The main database's file name as SQLite opened it ("" for an in-memory database)."""
    for row in conn.execute("PRAGMA database_list"):
        if row[1] == "main":
            return str(row[2] or "")
    return ""
