"""Is a failed statement a full disk? SQLite says SQLITE_FULL ("database or disk is full") itself,
but an extension's virtual table (sqlite-vec's "Could not insert a new vector chunk") reports the
same failure as its own internal error: then the file's room is looked at directly."""

from __future__ import annotations

import shutil
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.storage.port import Connection

# Room (bytes) below which an extension's failed write is a full disk: a sqlite-vec chunk takes
# ~1.5 MB at once (1,024 vectors of 384 floats), and the failed statement gives its pages back.
LOW_ROOM = 8 << 20


def says_full(exc: BaseException) -> bool:
    return "disk is full" in str(exc).lower()


def _extension_failure(exc: BaseException) -> bool:
    msg = str(exc).lower()
    return "internal" in msg or "could not" in msg


def room_left(conn: Connection, path: Path | None = None) -> int | None:
    """Bytes the database may still grow by: the lesser of its page cap and its disk's free space
    (None: unknown)."""
    with suppress(Exception):
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        cap = conn.execute("PRAGMA max_page_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        if path is None:
            path = Path(conn.execute("PRAGMA database_list").fetchone()[2] or ".")
        return int(min((cap - pages) * size, shutil.disk_usage(path.parent).free))
    return None


def full(conn: Connection, exc: BaseException, path: Path | None = None) -> bool:
    """`exc` came of a full disk: SQLite said so, or an extension failed with no room left. Read
    before the failed transaction rolls back."""
    if says_full(exc):
        return True
    if not _extension_failure(exc):
        return False
    left = room_left(conn, path)
    return left is not None and left < LOW_ROOM
