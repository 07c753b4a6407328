"""The gates service (`eng.gates`): the checks an agent runs around an action.

`pre(text)` gathers, in one block, the flows for the intended action, the rejections, the
active state and the critical rules. `post(outcome, summary)` records the flow run (if a flow
is named), which updates its effectiveness, and logs a state entry — consolidating with a similar
active state entry of the same agent instead of adding a near-copy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Protocol

from engine.audit import log as audit
from engine.context import Context
from engine.errors import InvalidInput, cut
from engine.lifecycle.boot import Boot, neutralize
from engine.lifecycle.flows import Flows
from engine.lifecycle.rules import Rules
from engine.lifecycle.types import FLOW_OUTCOMES, BootItem, FlowMatch, FlowOutcome, GatePost, GatePre, Rule
from engine.memory_input import check_text
from engine.retrieval.query import content_terms
from engine.storage.port import Connection
from engine.types import load_json

STATE_CATEGORY = "state"
STATE_SCAN = 50  # newest active state entries compared for consolidation


def similarity(a: str, b: str) -> float:
    """Word-set overlap (Jaccard over content words): cheap, deterministic, no model."""
    x, y = set(content_terms(a)), set(content_terms(b))
    return len(x & y) / len(x | y) if x and y else 0.0


def render_gate(pre: GatePre) -> str:
    out = [f"GATE PRE{' [' + pre.agent + ']' if pre.agent else ''}: {neutralize(pre.text)}"]
    out.append("Flows:" if pre.flows else "Flows: none match")
    for m in pre.flows:
        f, s = m.flow, m.flow.stats
        eff = "no runs" if s.effectiveness is None else f"{s.effectiveness:.0%} ({s.passes}/{s.uses})"
        flag = "  FLAGGED" if s.flagged else ""
        appr = "  needs approval" if f.needs_approval else ""
        out.append(f"  {f.name}  [{m.via}: {', '.join(m.matched)}]  {eff}{flag}{appr}")
        out += [f"    {i}. {neutralize(step)}" for i, step in enumerate(f.steps, 1)]
    out.append("Rejections:" if pre.rejections else "Rejections: none")
    out += [f"  - {neutralize(r.content)}" for r in pre.rejections]
    out.append("Active state:" if pre.state else "Active state: none")
    out += [f"  - {neutralize(s.content)}" for s in pre.state]
    out.append("Critical rules:" if pre.critical_rules else "Critical rules: none")
    out += [f"  - [r{r.id} · {r.score:g}] {neutralize(r.text)}" for r in pre.critical_rules]
    return "\n".join(out)


class StateMemories(Protocol):
    """What the post-action gate needs from the memories service for its state entries."""

    def add(
        self,
        content: str,
        *,
        kind: str = ...,
        category: str = ...,
        agent: str = ...,
        importance: float = ...,
        metadata: dict | None = ...,
        dedup: bool = ...,
        reason: str = ...,
    ) -> int: ...

    def reinforce_in(
        self, conn: Connection, ids: Iterable[int], now: float, *, action: str, reason: str = ...
    ) -> None: ...

    def embed_one(self, memory_id: int) -> None: ...


def state_entries(conn: Connection, agent: str | None, limit: int) -> list[Any]:
    """The newest active state entries (of `agent`, when given)."""
    return conn.lifecycle_queries.state_entries(STATE_CATEGORY, agent, int(limit))


class Gates:
    """`eng.gates`: before an action (`pre`) and after it (`post`)."""

    def __init__(self, ctx: Context, rules: Rules, flows: Flows, boot: Boot, memories: StateMemories) -> None:
        self.ctx = ctx
        self.rules = rules
        self.flows = flows
        self.boot = boot
        self.memories = memories

    def pre(self, text: str, agent: str | None = None, *, flows: int = 3) -> GatePre:
        """Everything to check before acting on `text`, as data and as one readable block."""
        text = check_text(text, "action text", limit=10_000)
        matches: list[FlowMatch] = self.flows.check(text, agent=agent, limit=flows)
        ls = self.ctx.settings.lifecycle
        n = ls.boot_max_items
        with self.ctx.store.reading() as c:
            rejections = self.boot.items(c, "rejected", agent, n)
            state = [
                BootItem(r["id"], r["category"], r["content"], r["agent"], r["tier"])
                for r in state_entries(c, agent, n)
            ]
            critical: list[Rule] = self.rules.top(c, agent, ("critical",), ls.boot_max_rules)
        pre = GatePre(text, agent, matches, rejections, state, critical, "")
        pre.block = render_gate(pre)
        return pre

    def post(
        self, outcome: FlowOutcome, summary: str, *, agent: str = "", flow: str | None = None, note: str = ""
    ) -> GatePost:
        """Record how an action went: a flow run when `flow` is named, and a state entry."""
        if outcome not in FLOW_OUTCOMES:
            raise InvalidInput(f"an outcome is pass or fail, not {cut(outcome)}")
        summary = check_text(summary, "summary", limit=10_000).strip()
        agent = check_text(agent or "", "agent", allow_empty=True, limit=200)
        run = self.flows.record_run(flow, outcome, note=note or summary, agent=agent) if flow else None
        content = f"{flow + ' ' if flow else ''}{outcome}: {summary}"
        meta = {"state": True, "flow": flow, "outcome": outcome}
        actor, now = self.ctx.actor, self.ctx.clock.now()
        threshold = self.ctx.settings.lifecycle.state_similarity

        def write(conn: Connection) -> tuple[int | None, bool]:
            for r in state_entries(conn, agent, STATE_SCAN):
                old = load_json(r["metadata"])
                same_flow = flow is not None and old.get("flow") == flow
                if same_flow or similarity(summary, old.get("summary", r["content"])) >= threshold:
                    merged = {**old, **meta, "summary": summary, "updates": int(old.get("updates", 1)) + 1}
                    conn.memories.update(
                        r["id"],
                        {"content": content, "metadata": json.dumps(merged, ensure_ascii=False)},
                        now,
                    )
                    audit.append(
                        conn,
                        at=now,
                        actor=actor,
                        action="state-consolidate",
                        target_kind="memory",
                        target_id=r["id"],
                        summary={
                            "outcome": outcome,
                            "flow": flow,
                            "content": [audit.preview(r["content"]), audit.preview(content)],
                        },
                    )
                    self.memories.reinforce_in(conn, [r["id"]], now, action="reinforce", reason="gate post")
                    return int(r["id"]), True
            return None, False

        found, consolidated = self.ctx.store.write(write)
        if found is not None:
            mid = found
            self.memories.embed_one(mid)  # the text changed: refresh (or mark stale) its vector
        else:  # outside the write: embedding may wait for the model
            mid = self.memories.add(
                content,
                kind="episodic",
                category=STATE_CATEGORY,
                agent=agent,
                importance=0.6,
                metadata={**meta, "summary": summary},
                dedup=False,
                reason="gate post",
            )
        stats = self.flows.get(flow).stats if flow else None
        return GatePost(outcome, flow, run.id if run else None, stats, mid, consolidated)
