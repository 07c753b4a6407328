"""The `sessions` and `messages` tables' gateway (a session's messages belong to it): sessions are
inserted (the sessions service) and updated (an importer bringing a session's newer title, end and
provenance), messages appended (the sessions service), and both deleted or blanked by a forget's
cascade (engine/forget/select.py) only here, inside the caller's transaction. Column names are
fixed here, never input. A forget's scrub is the one exception: it redacts quoted text in rows of
any table (engine/forget/scrub.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.sql import chunked, marks
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


def insert_message(
    conn: Any,
    session_id: str,
    role: str,
    content: str,
    tool_name: str | None,
    at: float,
    token_count: int,
    metadata: str,
) -> int:
    """Append a message to a session (`metadata`: JSON text). Returns its id."""
    got = conn.execute(
        "INSERT INTO messages(session_id, role, content, tool_name, at, token_count, metadata)"
        " VALUES (?,?,?,?,?,?,?) RETURNING id",
        (session_id, role, content, tool_name, at, token_count, metadata),
    ).fetchall()
    return int(got[0][0])


def delete_messages(conn: Any, message_ids: Iterable[int]) -> None:
    """Delete messages by id (a forget's cascade)."""
    for chunk in chunked(sorted(message_ids)):
        conn.execute(f"DELETE FROM messages WHERE id IN ({marks(len(chunk))})", chunk)


def delete_messages_of(conn: Any, session_ids: list[str]) -> None:
    """Delete every message of these sessions (a forget's cascade, before the sessions go)."""
    conn.execute(f"DELETE FROM messages WHERE session_id IN ({marks(len(session_ids))})", session_ids)


def delete(conn: Any, session_ids: list[str]) -> None:
    """Delete sessions (a forget's cascade): the sessions naming one as parent let go first."""
    conn.execute(
        "UPDATE sessions SET parent_session_id = NULL"
        f" WHERE parent_session_id IN ({marks(len(session_ids))})",
        session_ids,
    )
    for chunk in chunked(session_ids):
        conn.execute(f"DELETE FROM sessions WHERE id IN ({marks(len(chunk))})", chunk)


def clear_titles(conn: Any, session_ids: list[str]) -> None:
    """Blank the titles of sessions that stay (a forget whose text a title quoted)."""
    conn.execute(f"UPDATE sessions SET title = '' WHERE id IN ({marks(len(session_ids))})", session_ids)
