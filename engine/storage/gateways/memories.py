"""The `memories` table gateway (what agents remember): its only writer. Column names are fixed
here, never input; each adapter renders the SQL (engine/storage/{sqlite,postgres}/gateways/)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from engine.storage.gateways.base import Gateway, checked

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

# Columns a whole-row insert may set (a curator merge builds the merged record column by column).
INSERTABLE = UPDATABLE | {"access_count", "created_at", "updated_at"}

LINKS = ("message_id", "session_id")


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


class MemoryRows(Gateway):
    """Operations on `memories` rows, inside the caller's transaction."""

    # -- the adapter's primitives -----------------------------------------------------------------
    def _insert(self, values: Mapping[str, Any]) -> int:
        """INSERT one row of checked columns; its id."""
        raise NotImplementedError

    def _update(self, memory_id: int, changes: Mapping[str, Any]) -> None:
        """UPDATE one row: set checked columns."""
        raise NotImplementedError

    def _unlink(self, column: str, targets: Sequence[Any]) -> None:
        """Set `column` (a checked link column) to NULL where it is one of `targets`."""
        raise NotImplementedError

    # -- operations --------------------------------------------------------------------------------
    def row(self, memory_id: int) -> Any:
        """The whole row (None: no such memory)."""
        raise NotImplementedError

    def insert(
        self,
        n: NewMemory,
        *,
        created: float,
        now: float,
        anchor: float | None = None,
        access_count: int = 0,
        last_accessed: float | None = None,
        embedded: bool = False,
    ) -> int:
        """A new memory at full strength, anchored at `anchor` (default `created`). Returns its
        id. An import carries the source's use: `access_count`, `last_accessed` (and the anchor).
        `embedded`: its vector is stored in the same transaction (no second UPDATE, issue #24)."""
        extra = {"embedded": 1} if embedded else {}
        return self._insert(
            {
                "content": n["content"], "kind": n["kind"], "category": n["category"],
                "tier": n["tier"], "agent": n["agent"], "user": n["user"],
                "importance": n["importance"], "strength": 1.0, "anchor_strength": 1.0,
                "access_count": int(access_count), "created_at": created,
                "last_accessed_at": last_accessed,
                "last_reinforced_at": created if anchor is None else anchor,
                "pinned": n["pinned"], "session_id": n["session_id"],
                "message_id": n["message_id"], "metadata": n["metadata_json"], "updated_at": now,
                **extra,
            }
        )  # fmt: skip

    def update(self, memory_id: int, changes: Mapping[str, Any], now: float) -> None:
        """Set `changes` (columns of UPDATABLE) and updated_at."""
        checked(changes, UPDATABLE, "an updatable memory column")
        self._update(memory_id, {**changes, "updated_at": now})

    def reinforce(self, memory_id: int, strength: float, now: float, *, count_access: bool) -> None:
        """Re-anchor at `strength` now (the decay clock restarts; archive_at is recomputed by the
        next decay pass) and record the access."""
        raise NotImplementedError

    def reinforce_many(self, rows: Sequence[tuple[int, float]], now: float, *, count_access: bool) -> None:
        """`reinforce` of every (memory id, strength) in one statement (a recall's k hits)."""
        raise NotImplementedError

    def rows_locked(self, memory_ids: Sequence[int]) -> list[Any]:
        """The rows of `memory_ids`, held against other writers until the transaction ends (a
        server: row locks taken in id order; SQLite's single writer holds them all already)."""
        raise NotImplementedError

    def lock_for_dedup(self, agents: Iterable[str]) -> None:
        """Before looking for duplicates of new memories: no other write of these agents' memories
        runs its own check until this transaction ends (two concurrent adds of one content by one
        agent make one memory). A no-op where writers are serialized anyway (SQLite)."""

    def set_embedded(self, memory_id: int, embedded: bool) -> None:
        """Whether the vector store holds the vector of the memory's current text."""
        self._update(memory_id, {"embedded": 1 if embedded else 0})

    def mark_all_embedded(self) -> int:
        """Every memory's vector is in the vector store (a reembed's switch: one statement, each
        row logged to the change feed by the schema's trigger). Returns how many rows."""
        raise NotImplementedError

    def delete(self, memory_ids: Sequence[int]) -> int:
        """Delete rows (triggers clean the keyword and vector indexes). Returns how many went."""
        raise NotImplementedError

    def insert_row(self, values: Mapping[str, Any]) -> int:
        """A memory built column by column (columns of INSERTABLE). Returns its id."""
        checked(values, INSERTABLE, "an insertable memory column")
        return int(self._insert(values))

    def restore(self, row: Mapping[str, Any], real: Iterable[str]) -> None:
        """Write a row back exactly as recorded, every column including updated_at (a curator
        undo). `real`: the table's real columns; a recorded name outside them is refused."""
        changes = {c: row[c] for c in row if c != "id"}
        checked(changes, real, "a memory column")
        if changes:
            self._update(row["id"], changes)

    def unlink(self, column: Literal["message_id", "session_id"], targets: Sequence[Any]) -> None:
        """Clear the memories' link to messages or sessions that are going (a forget); the
        memories stay. updated_at is left as it was: the memory itself did not change."""
        if column not in LINKS:
            raise ValueError(f"not a link column: {column}")
        if targets:
            self._unlink(column, list(targets))

    def unabsorb(self, memory_ids: Sequence[int]) -> None:
        """Sources of a merged memory that is going (a forget) become active records again."""
        raise NotImplementedError
