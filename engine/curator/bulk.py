"""Triage at scale: pick the pending proposals of a kind (and agent), then decide each one in its
own transaction. A proposal that cannot be decided (stale, already decided, gone) is reported and
the others still go through."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.context import Context
from engine.curator.types import Proposal
from engine.errors import EngineError
from engine.sql import chunked, marks


@dataclass
class BulkOutcome:
    """What happened to one proposal of a bulk decision."""

    id: int
    ok: bool
    status: str | None  # the proposal's status afterwards (None: no such proposal)
    error: str | None = None
    result_id: int | None = None
    skipped: bool = False  # left alone on purpose (a risky merge without include_risky)


def member_agents(ctx: Context, proposals: list[Proposal]) -> dict[int, set[str]]:
    """The agents of each proposal's members (a memory's or a rule's agent)."""
    want: dict[str, set[int]] = {"memory": set(), "rule": set()}
    for p in proposals:
        want[p.target_kind].update(p.members)
    agent: dict[tuple[str, int], str] = {}
    for kind, table in (("memory", "memories"), ("rule", "rules")):
        for chunk in chunked(sorted(want[kind])):
            for r in ctx.store.read(
                f"SELECT id, agent FROM {table} WHERE id IN ({marks(len(chunk))})", tuple(chunk)
            ):
                agent[(kind, int(r[0]))] = str(r[1] or "")
    return {p.id: {agent.get((p.target_kind, m), "") for m in p.members} for p in proposals}


def filter_agent(ctx: Context, proposals: list[Proposal], agent: str | None) -> list[Proposal]:
    if agent is None:
        return proposals
    agents = member_agents(ctx, proposals)
    return [p for p in proposals if agent in agents[p.id]]


def decide_each(
    ids: list[int], decide: Callable[[int], Proposal], current: Callable[[int], str | None]
) -> list[BulkOutcome]:
    """`decide(id)` per id, each its own transaction; an engine error is that id's outcome."""
    out: list[BulkOutcome] = []
    for pid in dict.fromkeys(ids):  # once each, in the order given
        try:
            p = decide(pid)
            out.append(BulkOutcome(pid, True, p.status, None, p.result_id))
        except EngineError as e:
            out.append(BulkOutcome(pid, False, current(pid), str(e).splitlines()[0] if str(e) else "error"))
    return out
