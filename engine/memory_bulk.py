"""Marked rows at once: archive or pin many memories in one transaction, one audit row per memory
changed (the same rows the single-memory calls write). An id that is missing, or already in the
state asked for, is reported per id and leaves the others to go through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from engine import memory_merged as merged
from engine.audit import log as audit
from engine.memory_input import as_memory_id

if TYPE_CHECKING:
    from engine.context import Context
    from engine.storage.port import Connection

Outcome = Literal["done", "unchanged", "missing", "refused"]


@dataclass
class MemoryOutcome:
    """What one id of a bulk edit came to."""

    id: int
    outcome: Outcome
    tier: str | None = None  # afterwards (None: no such memory)
    pinned: bool | None = None
    note: str = ""  # why not changed: "already archived", "no memory with id 9", "merged into 40"
    ok: bool = True  # the memory is now in the state asked for (False: missing or refused)

    def __post_init__(self) -> None:
        self.ok = self.outcome not in ("missing", "refused")


Change = Literal["archive", "pin"]


def _plan(r: Any, change: Change) -> tuple[dict[str, Any], str]:
    """(column changes, note when there is nothing to change) for one memory row."""
    if change == "archive":
        return ({}, "already archived") if r["tier"] == "archived" else ({"tier": "archived"}, "")
    return ({}, "already pinned") if r["pinned"] else ({"pinned": 1}, "")


def _summary(r: Any, changes: dict[str, Any]) -> dict[str, list[Any]]:
    """before -> after per column, as the single-memory edits write it (pinned as booleans)."""
    return {c: [bool(r[c]), bool(v)] if c == "pinned" else [r[c], v] for c, v in changes.items()}


def apply(ctx: Context, ids: list[int], change: Change, reason: str) -> list[MemoryOutcome]:
    """`change` every id (once each, in the order given) inside one write transaction."""
    wanted = list(dict.fromkeys(as_memory_id(i) for i in ids))  # bad ids refused before writing
    now = ctx.clock.now()

    def write(conn: Connection) -> list[MemoryOutcome]:
        out: list[MemoryOutcome] = []
        for mid in wanted:
            r = conn.memories.row(mid)  # read inside the write: a mark may be stale by now
            if r is None:
                out.append(MemoryOutcome(mid, "missing", note=f"no memory with id {mid}"))
                continue
            changes, note = _plan(r, change)
            survivor = merged.refused(ctx, conn, r, change, now, reason) if changes else None
            if survivor is not None:  # a merge absorbed it: not kept in the archived source
                note = f"memory {mid} was merged into memory {survivor}; {change} memory {survivor} instead"
                out.append(MemoryOutcome(mid, "refused", r["tier"], bool(r["pinned"]), note))
                continue
            if not changes:
                out.append(MemoryOutcome(mid, "unchanged", r["tier"], bool(r["pinned"]), note))
                continue
            conn.memories.update(mid, changes, now)
            audit.append(
                conn, at=now, actor=ctx.actor, action=change, target_kind="memory", target_id=mid,
                reason=reason, summary=_summary(r, changes),
            )  # fmt: skip
            after = {"tier": r["tier"], "pinned": r["pinned"], **changes}
            out.append(MemoryOutcome(mid, "done", str(after["tier"]), bool(after["pinned"])))
        return out

    return ctx.store.write(write)
