"""A recall's access to its hits, recorded inside the recall's write (one statement over the hit
rows, one audit row), and the keyed fingerprint the audit keeps of a recall's query. Split out of
engine/memories.py (MemoriesService.record_access delegates here)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from engine import memory_merged as merged
from engine.audit import log as audit

if TYPE_CHECKING:
    from engine.memories import MemoriesService
    from engine.storage.port import Connection


def record_access(
    service: MemoriesService,
    conn: Connection,
    ids: Iterable[int],
    now: float,
    *,
    query: str,
    agent: str | None,
    reason: str,
) -> None:
    """Inside the caller's write: a recall's access to its hits, as `reinforce_in` reinforces
    each (the same strengths, counts and times) but in one statement over rows locked in id
    order, and audited by one row for the recall: the query's keyed fingerprint (never its
    text), the agent, the ids and their strengths before and after."""
    boost = service.ctx.settings.decay.reinforce_boost
    asked = list(dict.fromkeys(int(i) for i in ids))
    rows = {int(r["id"]): r for r in conn.memories.rows_locked(asked)}
    lands: dict[int, int] = {}  # asked id -> the id reinforced (a merge's survivor)
    for a in asked:
        r = rows.get(a)
        if r is not None and r["absorbed_into"] is not None:
            r = merged.survivor_row(conn, r)  # rare: a merge absorbed it since the search
        if r is not None:
            lands[a] = int(r["id"])
    missing = [m for m in set(lands.values()) if m not in rows]
    rows.update({int(r["id"]): r for r in conn.memories.rows_locked(missing)})
    targets = list(dict.fromkeys(m for m in lands.values() if m in rows))
    if not targets:
        return
    changes = []
    for mid in targets:
        before = service.current_strength(rows[mid], now)
        changes.append((mid, before, min(1.0, before + boost)))
    conn.memories.reinforce_many([(m, after) for m, _, after in changes], now, count_access=True)
    summary: dict[str, Any] = {
        "query": query_fingerprint(query),
        "agent": agent,
        "ids": [m for m, _, _ in changes],
        "strength": [[round(b, 3), round(a, 3)] for _, b, a in changes],
    }
    moved = {str(a): m for a, m in lands.items() if a != m}
    if moved:
        summary["asked_for"] = moved  # merged into these
    audit.append(
        conn, at=now, actor=service.ctx.actor, action="access", target_kind="recall",
        target_id=summary["query"], reason=reason, summary=summary,
    )  # fmt: skip


def query_fingerprint(query: str) -> str:
    """A recall's query as the audit keeps it: a keyed hash of its words (equal for the same
    words, case and spacing aside), never the text, which a forget may have to remove."""
    from engine.keys import keyed_hash

    return keyed_hash("recall-query", " ".join(query.casefold().split()))[:16]
