"""Reading rules: one rule, filtered lists (full-text included), counts per status, a rule's score
history and projected decay, the filters the Rules pane offers, and the best rules for boot."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import replace

from engine.clock import DAY
from engine.context import Context
from engine.errors import InvalidInput, NotFound, cut
from engine.lifecycle.decay import band, check_days, rule_score_at
from engine.lifecycle.rule_fields import as_tuple, check_rule_id, row_to_rule
from engine.lifecycle.types import (
    RULE_STATUSES,
    CurvePoint,
    DecayCurve,
    Rule,
    RuleDetail,
    RuleFacets,
    RuleHistoryPoint,
    RuleOrder,
    RuleStatus,
)
from engine.retrieval.query import plan
from engine.storage.indexes import KeywordIndex
from engine.storage.port import Connection
from engine.storage.queries.lifecycle import RULE_ORDERS, RuleFilter

ORDERS = RULE_ORDERS  # score | recent | created | violations | id (rendered by each adapter)


RULE_MATCH_CAP = 20_000  # rules a full-text filter can match (ids bound as parameters)


class RuleReads:
    """The read side of `eng.rules`, composed by `Rules`: nothing here writes."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @property
    def keyword(self) -> KeywordIndex:
        """The store's keyword index (attached by the façade)."""
        return self.ctx.store.keyword

    def get(self, rule_id: int) -> Rule:
        rid = check_rule_id(rule_id)
        r = self.ctx.store.query(lambda c: c.rules.row(rid))
        if r is None:
            raise NotFound(f"no rule with id {rule_id}")
        return row_to_rule(r)

    def list(
        self,
        *,
        status: str | Sequence[str] | None = None,
        agent: str | None = None,
        domain: str | None = None,
        source: str | None = None,
        min_score: float | None = None,
        max_score: float | None = None,
        pinned: bool | None = None,
        query: str | None = None,
        include_global: bool = False,
        include_absorbed: bool = False,
        order: RuleOrder = "score",
        limit: int = 500,
    ) -> builtins.list[Rule]:
        """Rules matching every given filter. `status` may be one status or several; `agent`
        with `include_global` also returns rules with no agent; `query` is full-text over the text;
        `order` is one of score | recent | created | violations | id."""
        statuses = as_tuple(status)
        if statuses:
            bad = [s for s in statuses if s not in RULE_STATUSES]
            if bad:
                raise InvalidInput(
                    f"unknown rule status {cut(bad[0])}; use one of {', '.join(RULE_STATUSES)}"
                )
        if order not in ORDERS:
            raise InvalidInput(f"unknown order {cut(order)}; use one of {', '.join(ORDERS)}")
        where = RuleFilter(
            statuses=tuple(statuses or ()),
            agent=agent,
            include_global=include_global,
            domain=domain,
            source=source,
            min_score=None if min_score is None else float(min_score),
            max_score=None if max_score is None else float(max_score),
            pinned=pinned,
            include_absorbed=include_absorbed,
        )
        with self.ctx.store.reading() as c:
            if query:
                p = plan(query)
                if p.index != "words":
                    where = replace(where, like=tuple(p.like or (f"%{query.strip()}%",)))
                else:
                    ids = [i for i, _ in self.keyword.match_ids(c, "rules", p.match or "", RULE_MATCH_CAP)]
                    where = replace(where, ids=ids)
            rows = c.lifecycle_queries.rules(where, order, int(limit))
        return [row_to_rule(r) for r in rows]

    def counts(self, agent: str | None = None) -> dict[str, int]:
        """Rules per status (absorbed rules excluded), every status present."""
        got = self.ctx.store.query(lambda c: c.lifecycle_queries.rule_counts(agent))
        out: dict[str, int] = {s: 0 for s in RULE_STATUSES}
        out.update(got)
        return out

    def history(self, rule_id: int) -> builtins.list[RuleHistoryPoint]:
        """Every score/status change of a rule, oldest first."""
        with self.ctx.store.reading() as c:
            rows = c.rule_history.of_rule(check_rule_id(rule_id))
        return [
            RuleHistoryPoint(
                r["at"],
                r["old_score"],
                r["new_score"],
                r["old_status"],
                r["new_status"],
                r["reason"],
                r["actor"],
            )
            for r in rows
        ]

    def curve(self, rule_id: int, days: float = 30, now: float | None = None) -> DecayCurve:
        """Projected score of one rule, one point per day, if nothing reinforces it."""
        days = check_days(days)
        now = self.ctx.clock.now() if now is None else float(now)
        ds = self.ctx.settings.decay
        rid = int(rule_id)
        r = self.ctx.store.query(lambda c: c.rules.row(rid))
        if r is None:
            raise NotFound(f"no rule with id {rule_id}")
        pts, cross = [], None
        for d in range(int(days) + 1):
            s, st = rule_score_at(r, now + d * DAY, ds)
            pts.append(CurvePoint(float(d), now + d * DAY, s))
            if cross is None and st == "retired" and r["status"] != "retired":
                cross = now + d * DAY
        frozen = band(float(r["score"])) == "critical" or bool(r["pinned"]) or r["status"] == "retired"
        return DecayCurve("rule", r["id"], r["status"], 3.0, frozen, cross, pts)

    def detail(self, rule_id: int, days: float = 30) -> RuleDetail:
        """A rule, its score history and its projected score over the next `days`."""
        rule = self.get(rule_id)
        now = self.ctx.clock.now()
        last = rule.last_reinforced_at if rule.last_reinforced_at is not None else rule.created_at
        return RuleDetail(
            rule, self.history(rule.id), self.curve(rule.id, days, now), round(max(0.0, now - last) / DAY, 2)
        )

    def facets(self) -> RuleFacets:
        """What the Rules pane's filters offer: every domain and agent a rule has, and the agents
        a boot preview can be shown for."""
        domains, agents, mem_agents, total = self.ctx.store.query(lambda c: c.lifecycle_queries.rule_facets())
        boot = sorted({a for a in agents + mem_agents if a})
        return RuleFacets(domains, agents, boot, total)

    def top(
        self, conn: Connection, agent: str | None, statuses: tuple[RuleStatus, ...], limit: int
    ) -> builtins.list[Rule]:
        """Inside the caller's read: the best rules of these statuses for `agent` (with the shared
        ones), by score then recency — what boot and the pre-action gate show."""
        return [row_to_rule(r) for r in conn.lifecycle_queries.top_rules(agent, statuses, int(limit))]
