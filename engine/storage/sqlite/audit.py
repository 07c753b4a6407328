"""SQLite's side of the audit chain: the file a connection has open (`PRAGMA database_list`), which
an anchor records beside the database id, and its place (the absolute path) and instance (device
and inode: a file made anew at that path is another database; a writer of its bytes keeps them).
The chain's position is `id` (one writer, AUTOINCREMENT); the writer holds the whole file, so the
chain needs no lock of its own. The audit gateway and read model (gateways/audit.py,
queries/audit.py) answer through these."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.storage.port import Connection

POSITION = "id"


def database_path(conn: Connection) -> str:
    """The main database's file name as SQLite opened it ("" for an in-memory database)."""
    for row in conn.execute("PRAGMA database_list"):
        if row[1] == "main":
            return str(row[2] or "")
    return ""


def database_place(conn: Connection) -> tuple[str, str] | None:
    path = database_path(conn)
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return os.path.abspath(path), f"{st.st_dev}:{st.st_ino}"
