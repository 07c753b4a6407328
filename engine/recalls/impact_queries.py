"""What "impact before approval" re-runs (issue #26): the agents' logged recalls of the last days
that returned a proposal's members, and every pinned retrieval check, as curator impact queries.
Recalls that never saw a member can change too (a merged text may enter them), but re-running
the whole log on every look would cost a search per logged recall: the ones that returned a
member are the ones a merge or an archive takes something from."""

from __future__ import annotations

from collections.abc import Iterable

from engine.context import Context
from engine.curator.impact import ImpactQuery
from engine.recalls.types import Check, Recall

DAYS = 30.0
MAX_RECALLS = 50  # distinct logged searches re-run per look (newest first)
MAX_CHECKS = 200
FILTERS = ("tier", "kind", "category", "agent", "user")


def logged_queries(ctx: Context, members: Iterable[int], days: float = DAYS) -> list[ImpactQuery]:
    """The newest distinct logged recalls (query, filters, mode, k) since `days` ago that returned
    any of `members`, labelled "recall #N"."""
    wanted = {int(m) for m in members}
    since = ctx.clock.now() - days * 86400.0
    rows = ctx.store.query(lambda c: c.recall_queries.recalls(None, since, None, 1000))
    out: list[ImpactQuery] = []
    seen: set[tuple] = set()
    for rec in (Recall.of(r) for r in rows):
        if not wanted & {h.id for h in rec.hits}:
            continue
        key = (rec.query, repr(sorted(rec.filters.items())), rec.mode, rec.k)
        if key in seen:
            continue
        seen.add(key)
        out.append(ImpactQuery(f"recall #{rec.id}", rec.query, _filters(rec.filters), rec.k, _mode(rec.mode)))
        if len(out) >= MAX_RECALLS:
            break
    return out


def check_queries(ctx: Context) -> list[ImpactQuery]:
    """Every pinned retrieval check, labelled "check #N" (its memory must stay in the top k)."""
    rows = ctx.store.query(lambda c: c.recall_queries.checks())
    return [
        ImpactQuery(f"check #{c.id} (memory {c.memory_id})", c.query, _filters(c.filters), c.k, _mode(c.mode))
        for c in (Check.of(r) for r in rows[:MAX_CHECKS])
    ]


def _filters(f: dict) -> dict:
    """The filters a search takes, as logged (None and unknown keys left out)."""
    return {k: v for k, v in (f or {}).items() if k in FILTERS and v is not None}


def _mode(mode: str) -> str | None:
    return mode if mode in ("hybrid", "keyword", "vector") else None
