"""Replaying a logged recall against today's store: the same query, filters, mode and k, run now
without recording access or logging, and the difference named — which hits left or entered, and
what the store knows changed them (merged into #M, forgotten by case #F, archived by decay, edited,
new since)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.recalls.types import HitChange, LoggedHit, Recall

if TYPE_CHECKING:
    from engine.storage.port import Connection

# Audit actions that change a memory's tier, as a cause reads them.
_TIER = {
    "archive": "archived by {actor}",
    "restore": "restored by {actor}",
    "promote-core": "promoted to core by {actor}",
}


def causes(conn: Connection, rec: Recall, left: list[int], entered: list[int]) -> dict[int, str]:
    """{memory id: why it left or entered}, from the rows, tombstones, merges and audit rows."""
    ids = sorted(set(left) | set(entered))
    if not ids:
        return {}
    fates = {int(r["id"]): r for r in conn.recall_queries.fates(ids)}
    forgotten = conn.recall_queries.forgotten_by([m for m in ids if m not in fates])
    survivors = [int(r["absorbed_into"]) for r in fates.values() if r["absorbed_into"] is not None]
    merges = conn.recall_queries.merged_by(survivors + [m for m in entered])
    events: dict[int, list[tuple[str, str]]] = {}
    for mid, action, actor in conn.recall_queries.audit_since(ids, rec.at):
        events.setdefault(mid, []).append((action, actor))
    out: dict[int, str] = {}
    for mid in left:
        out[mid] = _why_left(mid, fates.get(mid), forgotten, merges, events.get(mid, []), rec)
    for mid in entered:
        out[mid] = _why_entered(mid, fates.get(mid), merges, events.get(mid, []), rec)
    return out


def _why_left(
    mid: int, row: Any, forgotten: dict[int, int], merges: dict[int, int], ev: list, rec: Recall
) -> str:
    if row is None:
        return f"forgotten by case #{forgotten[mid]}" if mid in forgotten else "deleted"
    if row["absorbed_into"] is not None:
        into = int(row["absorbed_into"])
        by = f" (proposal #{merges[into]})" if into in merges else ""
        return f"merged into #{into}{by}"
    tier_ev = [(a, who) for a, who in ev if a in _TIER]
    if row["tier"] not in rec.filters.get("tier", [row["tier"]]):
        if tier_ev:
            a, who = tier_ev[-1]
            return _TIER[a].format(actor=who)
        return f"{row['tier']} by decay" if row["tier"] == "archived" else f"now {row['tier']}"
    return _changed(ev) or "outranked (scores moved: strength, recency or other memories)"


def _why_entered(mid: int, row: Any, merges: dict[int, int], ev: list, rec: Recall) -> str:
    if row is None:
        return "new"
    if mid in merges:
        return f"merge survivor (proposal #{merges[mid]})"
    if float(row["created_at"] or 0) > rec.at:
        return "added since"
    tier_ev = [(a, who) for a, who in ev if a in _TIER]
    if tier_ev:
        a, who = tier_ev[-1]
        return _TIER[a].format(actor=who)
    return _changed(ev) or "rose (scores moved: strength, recency or other memories left)"


def _changed(ev: list[tuple[str, str]]) -> str:
    """What the audit says an operator or agent did to it since (reads reinforcing it aside)."""
    done = list(dict.fromkeys(a for a, _ in ev if a not in ("access", "reinforce")))
    if "edit" in done:
        return "edited since"
    return f"changed since ({', '.join(done)})" if done else ""


def diff(rec: Recall, now: list[LoggedHit]) -> tuple[list[int], list[int]]:
    then_ids = rec.hit_ids
    now_ids = [h.id for h in now]
    return [m for m in then_ids if m not in now_ids], [m for m in now_ids if m not in then_ids]


def changes(
    rec: Recall, now: list[LoggedHit], why: dict[int, str]
) -> tuple[list[HitChange], list[HitChange]]:
    marked = dict(rec.forgotten)  # the log's ranks count the forgotten markers too
    ranks = [r for r in range(1, len(rec.hits) + len(marked) + 1) if r not in marked]
    then_rank = {m: ranks[i] for i, m in enumerate(rec.hit_ids)}
    now_rank = {h.id: i + 1 for i, h in enumerate(now)}
    left, entered = diff(rec, now)
    return (
        [HitChange(None, "left", rank, None, f"forgotten by case #{case}") for rank, case in rec.forgotten]
        + [HitChange(m, "left", then_rank[m], None, why.get(m, "")) for m in left],
        [HitChange(m, "entered", None, now_rank[m], why.get(m, "")) for m in entered],
    )
