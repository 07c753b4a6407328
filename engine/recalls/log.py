"""Writing the recall log: one row per agent recall, in the same write that records the recall's
access (engine/retrieval/search.py calls `record_in` there), so a recall costs one more statement
and no more transactions or round trips of its own. Every PRUNE_EVERY rows the write also prunes
by retention ([recalls] keep_days, max_rows), audited when it deletes anything."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from engine.audit import log as audit
from engine.types import Breakdown

if TYPE_CHECKING:
    from engine.context import Context
    from engine.retrieval.filters import Filters
    from engine.retrieval.request import SearchRequest
    from engine.storage.port import Connection
    from engine.types import SearchResult

PRUNE_EVERY = 256  # rows between retention passes (one cheap indexed DELETE pair)
DAY = 86_400.0


_PARTS = tuple(f.name for f in fields(Breakdown) if f.name != "final")  # a hit's logged parts


def filters_doc(f: Filters) -> dict[str, Any]:
    """The filters as logged (and as a replay or a check passes them back)."""
    doc: dict[str, Any] = {"tier": list(f.tiers)}
    for col in ("kind", "category", "agent", "user"):
        v = getattr(f, col)
        if v is not None:
            doc[col] = v
    return doc


def request_from(query: str, k: int, f: dict[str, Any], mode: str) -> SearchRequest:
    """A logged (or pinned) search to run again: no access recorded, not logged again."""
    from engine.retrieval.request import SearchRequest

    m = mode if mode in ("hybrid", "keyword", "vector") else None
    tier, kind, cat = f.get("tier"), f.get("kind"), f.get("category")
    return SearchRequest.make(
        query, k, tier, kind, cat, f.get("agent"), f.get("user"), m, record_access=False
    )


def hits_doc(result: SearchResult) -> list[dict[str, Any]]:
    # The breakdown's fields read directly (dataclasses.asdict deep-copies every value: ~0.1 ms a
    # hit on an agent's recall, issue #24); the same keys in the same order.
    out = []
    for h in result.hits:
        b = h.breakdown
        parts = {k: v for k in _PARTS if (v := getattr(b, k)) is not None}
        out.append({"id": h.id, "score": h.score, "parts": parts})
    return out


def hit_ids_text(ids: list[int]) -> str:
    """ " 12 34 ": each id between spaces, so `LIKE '% 12 %'` finds exactly the rows holding 12."""
    return " " + " ".join(str(int(i)) for i in ids) + " "


def wanted(ctx: Context, request: SearchRequest) -> bool:
    """Is this search an agent's recall that the log keeps? (A door named it, or it records
    access; an operator's search does neither.)"""
    return ctx.settings.recalls.log and bool(request.door or request.record_access)


def record_in(
    conn: Connection,
    ctx: Context,
    request: SearchRequest,
    result: SearchResult,
    latency_ms: float,
    model: str,
) -> int:
    """THE recall-log hook: append one row inside the caller's write (the access recording's).
    Returns its id."""
    now = ctx.clock.now()
    agent = request.for_agent or request.filters.agent or ""
    values = (
        now, request.door or "engine", agent, ctx.actor, result.query,
        json.dumps(filters_doc(request.filters), ensure_ascii=False, sort_keys=True),
        result.mode, request.k, json.dumps(hits_doc(result), ensure_ascii=False, separators=(",", ":")),
        hit_ids_text([h.id for h in result.hits]),
        json.dumps(result.keyword_scope, ensure_ascii=False), round(latency_ms, 3), model,
    )  # fmt: skip
    log_id = conn.recall_log.insert(values)
    if log_id % PRUNE_EVERY == 0:
        prune_in(conn, ctx, now)
    return log_id


def prune_in(conn: Connection, ctx: Context, now: float) -> int:
    """Delete what retention no longer keeps; one audit row when anything went."""
    s = ctx.settings.recalls
    n = conn.recall_log.prune(now - s.keep_days * DAY, s.max_rows)
    if n:
        audit.append(conn, at=now, actor=ctx.actor, action="recalls-pruned", target_kind="recall_log",
                     summary={"deleted": n, "keep_days": s.keep_days, "max_rows": s.max_rows})  # fmt: skip
    return n


def forget_in(conn: Connection, memory_ids: list[int], case_id: int) -> int:
    """A forget's step (engine/forget/delete.py): take the forgotten memories out of every logged
    answer (a marker naming case `case_id` keeps each one's rank), and mark the checks pinning
    them to run again. The query texts that quote forgotten text are redacted by the forget's
    scrub (engine/storage/erasure.py SCRUBBED). Rows changed."""
    if not memory_ids:
        return 0
    gone = {int(m) for m in memory_ids}
    changed = 0
    for log_id, raw in conn.recall_queries.with_hits(sorted(gone)):
        try:
            hits = json.loads(raw)
        except (TypeError, ValueError):
            hits = []
        # A forgotten hit keeps its place as a marker naming the case, never its id or score.
        kept: list[dict[str, Any]] = []
        ids: list[int] = []
        for h in hits:
            if not isinstance(h, dict):
                continue
            hid = h.get("id")
            if hid is not None and int(hid) in gone:
                kept.append({"id": None, "forgotten_by": case_id})
            else:
                kept.append(h)
                if hid is not None:
                    ids.append(int(hid))
        text = json.dumps(kept, ensure_ascii=False, separators=(",", ":"))
        conn.recall_log.set_hits(log_id, text, hit_ids_text(ids))
        changed += 1
    conn.retrieval_checks.mark_due(sorted(gone))
    return changed
