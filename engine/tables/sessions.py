"""The `sessions` table gateway: sessions are inserted (the sessions service) and updated (an
importer bringing a session's newer title, end and provenance) only here, inside the caller's
transaction. Column names are fixed here, never input. A forget's cascade and scrub are the
exception: they erase or redact rows of any table (engine/forget/)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.sql import marks
from engine.tables import columns
from engine.tables.columns import checked

INSERTABLE = frozenset(
    {
        "id", "agent", "user", "source", "model", "title", "started_at", "ended_at",
        "parent_session_id", "metadata",
    }
)  # fmt: skip
UPDATABLE = frozenset({"title", "ended_at", "metadata", "parent_session_id"})


def insert(conn: Any, values: Mapping[str, Any]) -> None:
    """A new session row (columns of INSERTABLE; its id is the caller's)."""
    cols = checked(values, INSERTABLE, "an insertable session column")
    conn.execute(
        f"INSERT INTO sessions({', '.join(cols)}) VALUES ({marks(len(cols))})", [values[c] for c in cols]
    )


def update(conn: Any, session_id: str, changes: Mapping[str, Any]) -> None:
    """Set `changes` (columns of UPDATABLE)."""
    columns.update(conn, "sessions", session_id, changes, UPDATABLE, "an updatable session column")


def held_messages(conn: Any, session_id: str) -> list[tuple[str, str, str, float | None]]:
    """(role, content, tool name or "", at) of every message the session holds."""
    return [
        (str(r[0]), str(r[1] or ""), str(r[2] or ""), r[3])
        for r in conn.execute(
            "SELECT role, content, tool_name, at FROM messages WHERE session_id = ?", (session_id,)
        ).fetchall()
    ]
