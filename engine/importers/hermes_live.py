"""Reading a running Hermes' own `state.db` from inside Hermes' process (the live provider).

The importer reads a copy of state.db; the live provider cannot wait for one, so it reads the
file itself, read-only. It runs in the process where Hermes holds its own connection, and closing
any descriptor of a database file drops every POSIX lock the process holds on it — unless the
close goes through the same SQLite library, which defers it while the file is locked. Hermes uses
the stdlib `sqlite3`, so this module does too (never `sqlean`, never a Python `open()` of it).
The path becomes a percent-encoded URI, so `#`, `?` and `%` in a home's path are not URI syntax.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def _connect(home: Path) -> sqlite3.Connection | None:
    p = Path(home) / "state.db"
    if not p.is_file():
        return None
    conn = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
    conn.row_factory = sqlite3.Row
    return conn


def has_state(home: Path) -> bool:
    return (Path(home) / "state.db").is_file()


def session_row(home: Path, session_id: str) -> dict[str, Any] | None:
    """Hermes' row of one session (started_at, parent_session_id, title…), or None."""
    conn = _connect(home)
    if conn is None:
        return None
    try:
        row = conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return dict(row) if row is not None else None
    finally:
        conn.close()


def messages_after(home: Path, session_id: str, after_id: int) -> list[dict[str, Any]] | None:
    """The session's visible messages with a Hermes id above `after_id`, oldest first, as rows
    (superseded `active = 0` and hidden ones skipped, as the importer does); None without state.db."""
    conn = _connect(home)
    if conn is None:
        return None
    try:
        cols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
        where = " AND active != 0" if "active" in cols else ""
        where += " AND coalesce(display_kind, '') != 'hidden'" if "display_kind" in cols else ""
        rows = conn.execute(
            f"SELECT * FROM messages WHERE session_id = ? AND id > ?{where} ORDER BY id",
            (session_id, int(after_id)),
        ).fetchall()
        return [dict(r) for r in rows]
    finally:
        conn.close()
