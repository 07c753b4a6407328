"""GatesMixin: the checks an agent runs around an action.

`gate_pre(text)` gathers, in one block, the flows for the intended action, the rejections, the
active state and the critical rules. `gate_post(outcome, summary)` records the flow run (if a flow
is named), which updates its effectiveness, and logs a state entry — consolidating with a similar
active state entry of the same agent instead of adding a near-copy.
"""
from __future__ import annotations

import json

from . import audit
from .boot import neutralize
from .errors import InvalidInput
from .lifecycle_types import FLOW_OUTCOMES, BootItem, FlowMatch, GatePost, GatePre, Rule
from .memories import check_text
from .query import content_terms
from .types import load_json

STATE_CATEGORY = "state"
STATE_SCAN = 50               # newest active state entries compared for consolidation


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


class GatesMixin:
    def _state_entries(self, conn, agent: str | None, limit: int) -> list:
        where, params = [f"category = '{STATE_CATEGORY}'", "tier = 'active'", "absorbed_into IS NULL"], []
        if agent is not None:
            where.append("agent = ?"); params.append(agent)
        return conn.execute(f"SELECT * FROM memories WHERE {' AND '.join(where)} "
                            f"ORDER BY updated_at DESC, id DESC LIMIT ?", [*params, int(limit)]).fetchall()

    def gate_pre(self, text: str, agent: str | None = None, *, flows: int = 3) -> GatePre:
        """Everything to check before acting on `text`, as data and as one readable block."""
        text = check_text(text, "action text", limit=10_000)
        matches: list[FlowMatch] = self.check_flows(text, agent=agent, limit=flows)
        n = self.settings.lifecycle.boot_max_items
        with self.store.reading() as c:
            rejections = self._boot_items(c, "rejected", agent, n)
            state = [BootItem(r["id"], r["category"], r["content"], r["agent"], r["tier"])
                     for r in self._state_entries(c, agent, n)]
            critical: list[Rule] = self._boot_rules(c, agent, ("critical",),
                                                     self.settings.lifecycle.boot_max_rules)
        pre = GatePre(text, agent, matches, rejections, state, critical, "")
        pre.block = render_gate(pre)
        return pre

    def gate_post(self, outcome: str, summary: str, *, agent: str = "", flow: str | None = None,
                  note: str = "") -> GatePost:
        """Record how an action went: a flow run when `flow` is named, and a state entry."""
        if outcome not in FLOW_OUTCOMES:
            raise InvalidInput(f"an outcome is pass or fail, not {outcome!r}")
        summary = check_text(summary, "summary", limit=10_000).strip()
        agent = check_text(agent or "", "agent", allow_empty=True, limit=200)
        run = self.record_flow_run(flow, outcome, note=note or summary, agent=agent) if flow else None
        content = f"{flow + ' ' if flow else ''}{outcome}: {summary}"
        meta = {"state": True, "flow": flow, "outcome": outcome}
        now = self.clock.now()
        threshold = self.settings.lifecycle.state_similarity

        def write(conn) -> tuple[int, bool]:
            for r in self._state_entries(conn, agent, STATE_SCAN):
                old = load_json(r["metadata"])
                same_flow = flow is not None and old.get("flow") == flow
                if same_flow or similarity(summary, old.get("summary", r["content"])) >= threshold:
                    merged = {**old, **meta, "summary": summary,
                              "updates": int(old.get("updates", 1)) + 1}
                    conn.execute("UPDATE memories SET content = ?, metadata = ?, updated_at = ? WHERE id = ?",
                                 (content, json.dumps(merged, ensure_ascii=False), now, r["id"]))
                    audit.append(conn, at=now, actor=self.actor, action="state-consolidate",
                                 target_kind="memory", target_id=r["id"],
                                 summary={"outcome": outcome, "flow": flow,
                                          "content": [audit.snippet(r["content"]), audit.snippet(content)]})
                    self._reinforce(conn, [r["id"]], now, action="reinforce", reason="gate post")
                    return int(r["id"]), True
            return None, False

        mid, consolidated = self.store.write(write)
        if consolidated:
            self._embed_one(mid)        # the text changed: refresh (or mark stale) its vector
        else:                           # outside the write: embedding may wait for the model
            mid = self.add_memory(content, kind="episodic", category=STATE_CATEGORY, agent=agent,
                                  importance=0.6, metadata={**meta, "summary": summary}, dedup=False,
                                  reason="gate post")
        stats = self.get_flow(flow).stats if flow else None
        return GatePost(outcome, flow, run.id if run else None, stats, mid, consolidated)
