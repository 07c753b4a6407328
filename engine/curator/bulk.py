"""Triage at scale: pick the pending proposals of a kind (and agent), then decide each one in its
own transaction. A proposal that cannot be decided (stale, already decided, gone) is reported and
the others still go through."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.context import Context
from engine.curator.types import Proposal, ProposalRow
from engine.errors import EngineError
from engine.storage.port import Connection


@dataclass
class BulkOutcome:
    """What happened to one proposal of a bulk decision."""

    id: int
    ok: bool
    status: str | None  # the proposal's status afterwards (None: no such proposal)
    error: str | None = None
    result_id: int | None = None
    skipped: bool = False  # left alone on purpose (a risky merge without include_risky)
    stale: bool = False  # refused before applying: a member changed since it was proposed


def member_info(ctx: Context, proposals: list[Proposal]) -> dict[tuple[str, int], tuple[str, str]]:
    """(target kind, id) -> (text, agent) of every member of `proposals` (batched reads)."""
    want: dict[str, set[int]] = {"memory": set(), "rule": set()}
    for p in proposals:
        want[p.target_kind].update(p.members)

    def read(c: Connection) -> dict[str, dict[int, tuple[Any, Any]]]:
        return {kind: c.curator_queries.member_texts(kind, ids) for kind, ids in want.items() if ids}

    out: dict[tuple[str, int], tuple[str, str]] = {}
    for kind, found in ctx.store.query(read).items():
        for mid, (text, agent) in found.items():
            out[(kind, mid)] = (str(text or ""), str(agent or ""))
    return out


def rows(ctx: Context, proposals: list[Proposal], agent: str | None = None) -> list[ProposalRow]:
    """The list's rows (text preview and agents), only those with a member of `agent` if given."""
    info = member_info(ctx, proposals)
    out = []
    for p in proposals:
        members = [info.get((p.target_kind, m), ("", "")) for m in p.members]
        agents = sorted({a for _, a in members})
        if agent is not None and agent not in agents:
            continue
        if p.kind in ("merge", "promote") and p.survivor_text:
            text = p.survivor_text
        else:
            text = members[0][0] if members else ""
            if len(members) > 1:
                text += f" (+{len(members) - 1} more)"
        out.append(ProposalRow(p, text, agents))
    return out


def filter_agent(ctx: Context, proposals: list[Proposal], agent: str | None) -> list[Proposal]:
    if agent is None:
        return proposals
    return [r.proposal for r in rows(ctx, proposals, agent)]


def decide_each(
    ids: list[int],
    decide: Callable[[int], Proposal],
    current: Callable[[int], str | None],
    skip: dict[int, str] | None = None,
    stale: dict[int, str] | None = None,
) -> list[BulkOutcome]:
    """`decide(id)` per id, each its own transaction; an engine error is that id's outcome. An id
    in `skip` is left alone and reported as skipped with its reason; one in `stale` is refused
    with its reason without being tried."""
    out: list[BulkOutcome] = []
    for pid in dict.fromkeys(ids):  # once each, in the order given
        if skip and pid in skip:
            out.append(BulkOutcome(pid, False, current(pid), f"skipped, risky: {skip[pid]}", skipped=True))
            continue
        if stale and pid in stale:
            out.append(BulkOutcome(pid, False, current(pid), stale[pid], stale=True))
            continue
        try:
            p = decide(pid)
            out.append(BulkOutcome(pid, True, p.status, None, p.result_id))
        except EngineError as e:
            out.append(BulkOutcome(pid, False, current(pid), str(e).splitlines()[0] if str(e) else "error"))
    return out
