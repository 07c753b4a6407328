"""The `sessions` table gateway: sessions are inserted (the sessions service) and updated (an
importer bringing a session's newer title, end and provenance) only here, inside the caller's
transaction. Column names are fixed here, never input. A forget's cascade and scrub are the
exception: they erase or redact rows of any table (engine/forget/)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.sql import marks

INSERTABLE = frozenset(
    {
        "id", "agent", "user", "source", "model", "title", "started_at", "ended_at",
        "parent_session_id", "metadata",
    }
)  # fmt: skip
UPDATABLE = frozenset({"title", "ended_at", "metadata", "parent_session_id"})


def insert(conn: Any, values: Mapping[str, Any]) -> None:
    """A new session row (columns of INSERTABLE; its id is the caller's)."""
    bad = set(values) - INSERTABLE
    if bad:
        raise ValueError(f"not an insertable session column: {', '.join(sorted(bad))}")
    cols = list(values)
    conn.execute(
        f"INSERT INTO sessions({', '.join(cols)}) VALUES ({marks(len(cols))})", [values[c] for c in cols]
    )


def update(conn: Any, session_id: str, changes: Mapping[str, Any]) -> None:
    """Set `changes` (columns of UPDATABLE)."""
    bad = set(changes) - UPDATABLE
    if bad:
        raise ValueError(f"not an updatable session column: {', '.join(sorted(bad))}")
    cols = ", ".join(f"{c} = ?" for c in changes)
    conn.execute(f"UPDATE sessions SET {cols} WHERE id = ?", [*changes.values(), session_id])
