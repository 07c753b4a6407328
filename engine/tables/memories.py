"""The `memories` table gateway: every INSERT, UPDATE and DELETE of a memory row goes through
these functions, inside the caller's transaction. Column names are fixed here, never input."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from engine.sql import chunked, marks
from engine.tables import columns
from engine.tables.columns import checked

Tier = Literal["core", "active", "archived"]
Kind = Literal["episodic", "semantic", "procedural"]

# What an operator edit (or a lifecycle/curator step) may set; `updated_at` is always set.
UPDATABLE = frozenset(
    {
        "content", "kind", "category", "tier", "agent", "user", "importance", "strength",
        "anchor_strength", "last_reinforced_at", "last_accessed_at", "archive_at", "pinned",
        "session_id", "message_id", "metadata", "absorbed_into", "embedded",
    }
)  # fmt: skip


class NewMemory(TypedDict):
    """A validated memory to insert (engine/memories.normalize_item)."""

    content: str
    kind: Kind
    category: str
    tier: Tier
    agent: str
    user: str
    importance: float
    metadata: dict[str, Any]
    metadata_json: str
    session_id: str | None
    message_id: int | None
    pinned: int
    created_at: float | None


def row(conn: Any, memory_id: int) -> Any:
    """The whole row (None: no such memory)."""
    return conn.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()


def insert(
    conn: Any,
    n: NewMemory,
    *,
    created: float,
    now: float,
    anchor: float | None = None,
    access_count: int = 0,
    last_accessed: float | None = None,
) -> int:
    """A new memory at full strength, anchored at `anchor` (default `created`). Returns its id.
    An import carries the source's use: `access_count`, `last_accessed` (and the anchor)."""
    got = conn.execute(
        "INSERT INTO memories(content, kind, category, tier, agent, user, importance,"
        " strength, anchor_strength, access_count, created_at, last_accessed_at,"
        " last_reinforced_at, pinned, session_id, message_id, metadata, updated_at)"
        " VALUES (?,?,?,?,?,?,?,1.0,1.0,?,?,?,?,?,?,?,?,?) RETURNING id",
        (
            n["content"], n["kind"], n["category"], n["tier"], n["agent"], n["user"],
            n["importance"], int(access_count), created, last_accessed,
            created if anchor is None else anchor, n["pinned"], n["session_id"],
            n["message_id"], n["metadata_json"], now,
        ),
    ).fetchall()  # fmt: skip
    return int(got[0][0])


def update(conn: Any, memory_id: int, changes: Mapping[str, Any], now: float) -> None:
    """Set `changes` (columns of UPDATABLE) and updated_at."""
    checked(changes, UPDATABLE, "an updatable memory column")
    columns.update(conn, "memories", memory_id, {**changes, "updated_at": now}, [*changes, "updated_at"], "")


def reinforce(conn: Any, memory_id: int, strength: float, now: float, *, count_access: bool) -> None:
    """Re-anchor at `strength` now (the decay clock restarts; archive_at is recomputed by the
    next decay pass) and record the access."""
    conn.execute(
        "UPDATE memories SET anchor_strength = ?, strength = ?, last_reinforced_at = ?,"
        " access_count = access_count + ?, last_accessed_at = ?, archive_at = NULL,"
        " updated_at = ? WHERE id = ?",
        (strength, strength, now, 1 if count_access else 0, now, now, memory_id),
    )


def set_embedded(conn: Any, memory_id: int, embedded: bool) -> None:
    """Whether the vector store holds the vector of the memory's current text."""
    conn.execute("UPDATE memories SET embedded = ? WHERE id = ?", (1 if embedded else 0, memory_id))


def delete(conn: Any, memory_ids: Sequence[int]) -> int:
    """Delete rows (triggers clean the keyword and vector indexes). Returns how many went."""
    n = 0
    for part in chunked(memory_ids):
        n += conn.execute(f"DELETE FROM memories WHERE id IN ({marks(len(part))})", part).rowcount
    return n


# Columns a whole-row insert may set (a curator merge builds the merged record column by column).
INSERTABLE = UPDATABLE | {"access_count", "created_at", "updated_at"}


def insert_row(conn: Any, values: Mapping[str, Any]) -> int:
    """A memory built column by column (columns of INSERTABLE). Returns its id."""
    return int(columns.insert(conn, "memories", values, INSERTABLE, "an insertable memory column"))


def restore(conn: Any, row: Mapping[str, Any], real: Iterable[str]) -> None:
    """Write a row back exactly as recorded, every column including updated_at (a curator undo).
    `real`: the table's real columns; a recorded name outside them is refused."""
    columns.restore(conn, "memories", row, real, "a memory column")


def unlink(conn: Any, column: Literal["message_id", "session_id"], targets: Sequence[Any]) -> None:
    """Clear the memories' link to messages or sessions that are going (a forget); the memories
    stay. updated_at is left as it was: the memory itself did not change."""
    if column not in ("message_id", "session_id"):
        raise ValueError(f"not a link column: {column}")
    for part in chunked(targets):
        conn.execute(f"UPDATE memories SET {column} = NULL WHERE {column} IN ({marks(len(part))})", part)


def unabsorb(conn: Any, memory_ids: Sequence[int]) -> None:
    """Sources of a merged memory that is going (a forget) become active records again."""
    for part in chunked(memory_ids):
        conn.execute(
            f"UPDATE memories SET tier = 'active', absorbed_into = NULL WHERE id IN ({marks(len(part))})",
            part,
        )
