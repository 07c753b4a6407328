"""Writes that reach a memory a curator merge absorbed (engine/curator/apply.py archives it with
`absorbed_into` = the survivor). Such a write is never silently kept in the archived source: an
operator's change (edit, pin, importance, tier) is refused naming the survivor, and a
reinforcement (a recall's access, a gate, `reinforce`) goes to the survivor. Both are audited,
inside the write that found the memory absorbed, so a merge applied between an operator's read
and their write is caught too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.audit import log as audit

if TYPE_CHECKING:
    from engine.context import Context
    from engine.storage.port import Connection

MAX_HOPS = 16  # a survivor merged again: follow the chain this far


def refused(ctx: Context, conn: Connection, r: Any, action: str, now: float, reason: str = "") -> int | None:
    """Inside the caller's write: the survivor when a merge absorbed memory row `r` (a `refused`
    audit row written: the caller commits it, then raises MergedAway), else None."""
    if r is None or r["absorbed_into"] is None:
        return None
    survivor = int(r["absorbed_into"])
    audit.append(
        conn, at=now, actor=ctx.actor, action="refused", target_kind="memory", target_id=r["id"],
        reason=reason, summary={"wanted": action, "merged_into": survivor},
    )  # fmt: skip
    return survivor


def survivor_row(conn: Connection, r: Any) -> Any:
    """The row a write to `r` lands on: `r` itself, or the memory its merges ended in (None: the
    survivor is gone too)."""
    for _ in range(MAX_HOPS):
        if r is None or r["absorbed_into"] is None:
            return r
        r = conn.memories.row(int(r["absorbed_into"]))
    return r
