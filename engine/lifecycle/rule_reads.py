"""Reading rules: one rule, filtered lists (full-text included), counts per status, a rule's score
history and projected decay, the filters the Rules pane offers, and the best rules for boot."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

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
from engine.sql import marks
from engine.storage.indexes import KeywordIndex
from engine.tables import rule_history

ORDERS = {
    "score": "score DESC, id",
    "recent": "coalesce(last_reinforced_at, created_at) DESC, id",
    "created": "created_at DESC, id",
    "violations": "violations DESC, score DESC, id",
    "id": "id",
}


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
        r = self.ctx.store.read_one("SELECT * FROM rules WHERE id = ?", (check_rule_id(rule_id),))
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
        where: builtins.list[str] = ["1=1"]
        params: builtins.list[Any] = []
        statuses = as_tuple(status)
        if statuses:
            bad = [s for s in statuses if s not in RULE_STATUSES]
            if bad:
                raise InvalidInput(
                    f"unknown rule status {cut(bad[0])}; use one of {', '.join(RULE_STATUSES)}"
                )
            where.append(f"status IN ({marks(len(statuses))})")
            params += statuses
        if agent is not None:
            where.append("(agent = ? OR agent = '')" if include_global else "agent = ?")
            params.append(agent)
        if domain is not None:
            where.append("domain = ?")
            params.append(domain)
        if source is not None:
            where.append("source = ?")
            params.append(source)
        if min_score is not None:
            where.append("score >= ?")
            params.append(float(min_score))
        if max_score is not None:
            where.append("score <= ?")
            params.append(float(max_score))
        if pinned is not None:
            where.append("pinned = ?")
            params.append(1 if pinned else 0)
        if not include_absorbed:
            where.append("absorbed_into IS NULL")
        if order not in ORDERS:
            raise InvalidInput(f"unknown order {cut(order)}; use one of {', '.join(ORDERS)}")
        with self.ctx.store.reading() as c:
            if query:
                p = plan(query)
                if p.index != "words":
                    like = p.like or (f"%{query.strip()}%",)
                    where.append("(" + " OR ".join("text LIKE ? ESCAPE '\\'" for _ in like) + ")")
                    params += list(like)
                else:
                    ids = [i for i, _ in self.keyword.match_ids(c, "rules", p.match or "", RULE_MATCH_CAP)]
                    where.append(f"id IN ({marks(len(ids))})" if ids else "1 = 0")
                    params += ids
            rows = c.execute(
                f"SELECT * FROM rules WHERE {' AND '.join(where)} ORDER BY {ORDERS[order]} LIMIT ?",
                [*params, int(limit)],
            ).fetchall()
        return [row_to_rule(r) for r in rows]

    def counts(self, agent: str | None = None) -> dict[str, int]:
        """Rules per status (absorbed rules excluded), every status present."""
        sql = "SELECT status, count(*) FROM rules WHERE absorbed_into IS NULL"
        rows = self.ctx.store.read(
            sql + (" AND agent = ?" if agent is not None else "") + " GROUP BY status",
            (agent,) if agent is not None else (),
        )
        out: dict[str, int] = {s: 0 for s in RULE_STATUSES}
        out.update({s: n for s, n in rows})
        return out

    def history(self, rule_id: int) -> builtins.list[RuleHistoryPoint]:
        """Every score/status change of a rule, oldest first."""
        with self.ctx.store.reading() as c:
            rows = rule_history.of_rule(c, check_rule_id(rule_id))
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
        r = self.ctx.store.read_one("SELECT * FROM rules WHERE id = ?", (int(rule_id),))
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
        with self.ctx.store.reading() as c:
            domains = [
                r[0]
                for r in c.execute(
                    "SELECT DISTINCT domain FROM rules WHERE absorbed_into IS NULL ORDER BY domain"
                )
            ]
            agents = [
                r[0]
                for r in c.execute(
                    "SELECT DISTINCT agent FROM rules WHERE absorbed_into IS NULL ORDER BY agent"
                )
            ]
            mem_agents = [
                r[0]
                for r in c.execute("SELECT DISTINCT agent FROM memories WHERE agent != '' ORDER BY agent")
            ]
            total = c.execute("SELECT count(*) FROM rules WHERE absorbed_into IS NULL").fetchone()[0]
        boot = sorted({a for a in agents + mem_agents if a})
        return RuleFacets(domains, agents, boot, total)

    def top(
        self, conn: Any, agent: str | None, statuses: tuple[RuleStatus, ...], limit: int
    ) -> builtins.list[Rule]:
        """Inside the caller's read: the best rules of these statuses for `agent` (with the shared
        ones), by score then recency — what boot and the pre-action gate show."""
        where = [f"status IN ({marks(len(statuses))})", "absorbed_into IS NULL"]
        params: builtins.list[Any] = list(statuses)
        if agent:
            where.append("(agent = ? OR agent = '')")
            params.append(agent)
        rows = conn.execute(
            f"SELECT * FROM rules WHERE {' AND '.join(where)} ORDER BY score DESC, "
            f"coalesce(last_reinforced_at, created_at) DESC, id LIMIT ?",
            [*params, int(limit)],
        ).fetchall()
        return [row_to_rule(r) for r in rows]
