"""The rules service (`eng.rules`): rules with scores in bands, their score history, and rejections.

Bands: 9–10 critical (never decays on its own; only a person retires it), 5–8 active, 3–4 dormant,
below 3 retired (revivable, never deleted). Status follows the score's band unless the rule is
pinned. Every score or status change writes a rule_history row (the chart's series, through
engine/tables/rule_history.py) and an audit row. Near-duplicate rules are not merged here: that
is a curator proposal.
"""

from __future__ import annotations

import builtins
import json
import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from engine.audit import log as audit
from engine.clock import DAY
from engine.context import Context
from engine.errors import InvalidInput, NotFound
from engine.lifecycle.decay import band, check_days, clamp_score, rule_score_at
from engine.lifecycle.types import (
    RULE_SOURCES,
    RULE_STATUSES,
    CurvePoint,
    DecayCurve,
    RejectResult,
    Rule,
    RuleDetail,
    RuleFacets,
    RuleHistoryPoint,
    RuleOrder,
    RuleStatus,
)
from engine.memory_input import check_text
from engine.retrieval.query import plan
from engine.sql import marks
from engine.storage.indexes import KeywordIndex
from engine.tables import rule_history
from engine.types import load_json

REJECTION_SCORE = 10.0
REVIVE_SCORE = 5.0  # a revived rule re-enters the active band at least here
ORDERS = {
    "score": "score DESC, id",
    "recent": "coalesce(last_reinforced_at, created_at) DESC, id",
    "created": "created_at DESC, id",
    "violations": "violations DESC, score DESC, id",
    "id": "id",
}


RULE_MATCH_CAP = 20_000  # rules a full-text filter can match (ids bound as parameters)


class MemoryAdder(Protocol):
    """What a rejection needs from the memories service: storing the pinned memory it points at."""

    def add(
        self,
        content: str,
        *,
        kind: str = ...,
        category: str = ...,
        agent: str = ...,
        user: str = ...,
        importance: float = ...,
        pinned: bool = ...,
        reason: str = ...,
    ) -> int: ...


def row_to_rule(r: Any) -> Rule:
    return Rule(
        id=r["id"],
        text=r["text"],
        domain=r["domain"],
        agent=r["agent"],
        source=r["source"],
        score=float(r["score"]),
        status=r["status"],
        violations=int(r["violations"]),
        last_reinforced_at=r["last_reinforced_at"],
        last_decayed_at=r["last_decayed_at"],
        created_at=r["created_at"],
        pinned=bool(r["pinned"]),
        absorbed_into=r["absorbed_into"],
        metadata=load_json(r["metadata"]),
    )


def check_score(value: Any) -> float:
    """A rule score from input: a number from 0 to 10."""
    try:
        s = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"a rule score is a number from 0 to 10, not {value!r}") from None
    if math.isnan(s) or not 0.0 <= s <= 10.0:
        raise InvalidInput(f"a rule score is a number from 0 to 10, not {value}")
    return s


def check_rule_id(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"a rule id is a whole number, not {value!r}") from None


def _as_tuple(v: str | Sequence[str] | None) -> tuple[str, ...] | None:
    if v is None:
        return None
    return (v,) if isinstance(v, str) else tuple(v)


Changes = dict[str, Any]


class Rules:
    """`eng.rules`: reads, the operator's and agents' changes (each with history and audit rows),
    and rejections. `memories` stores the memory a rejection points at."""

    def __init__(self, ctx: Context, memories: MemoryAdder) -> None:
        self.ctx = ctx
        self.memories = memories

    @property
    def _keyword(self) -> KeywordIndex:
        """The store's keyword index (attached by the façade)."""
        return self.ctx.store.keyword

    # -- reads ---------------------------------------------------------------------------------------
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
        statuses = _as_tuple(status)
        if statuses:
            bad = [s for s in statuses if s not in RULE_STATUSES]
            if bad:
                raise InvalidInput(f"unknown rule status {bad[0]!r}; use one of {', '.join(RULE_STATUSES)}")
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
            raise InvalidInput(f"unknown order {order!r}; use one of {', '.join(ORDERS)}")
        with self.ctx.store.reading() as c:
            if query:
                p = plan(query)
                if p.index != "words":
                    like = p.like or (f"%{query.strip()}%",)
                    where.append("(" + " OR ".join("text LIKE ? ESCAPE '\\'" for _ in like) + ")")
                    params += list(like)
                else:
                    ids = [i for i, _ in self._keyword.match_ids(c, "rules", p.match or "", RULE_MATCH_CAP)]
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

    # -- writes --------------------------------------------------------------------------------------
    def add(
        self,
        text: str,
        *,
        score: float = 5.0,
        domain: str = "",
        agent: str = "",
        source: str = "manual",
        pinned: bool = False,
        reason: str = "",
        created_at: float | None = None,
        metadata: dict | None = None,
    ) -> Rule:
        """A new rule; its status is its score's band. Returns the stored rule."""
        rid = self.ctx.store.write(
            lambda c: self.insert(
                c,
                text,
                score=score,
                domain=domain,
                agent=agent,
                source=source,
                pinned=pinned,
                reason=reason,
                created_at=created_at,
                metadata=metadata,
            )
        )
        return self.get(rid)

    def insert(
        self,
        conn: Any,
        text: str,
        *,
        score: float,
        domain: str = "",
        agent: str = "",
        source: str = "manual",
        pinned: bool = False,
        reason: str = "",
        created_at: float | None = None,
        metadata: dict | None = None,
    ) -> int:
        """Inside the caller's write: validate and insert a rule with its first history row and
        its audit row. Returns its id."""
        text = check_text(text, "rule text", limit=10_000)
        score = check_score(score)
        domain = check_text(domain or "", "domain", allow_empty=True, limit=200)
        agent = check_text(agent or "", "agent", allow_empty=True, limit=200)
        if source not in RULE_SOURCES and not str(source).startswith("memory:"):
            raise InvalidInput(f"unknown rule source {source!r}; use one of {', '.join(RULE_SOURCES)}")
        actor, now = self.ctx.actor, self.ctx.clock.now()
        at = float(created_at) if created_at is not None else now
        status = band(score)
        got = conn.execute(
            "INSERT INTO rules(text, domain, agent, source, score, status, last_reinforced_at,"
            " created_at, pinned, metadata, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
            (
                text,
                domain,
                agent,
                source,
                score,
                status,
                at,
                at,
                1 if pinned else 0,
                json.dumps(metadata or {}, ensure_ascii=False),
                now,
            ),
        ).fetchall()
        rid = int(got[0][0])
        rule_history.record(
            conn,
            rule_history.RuleChange(
                rule_id=rid,
                at=at,
                new_score=score,
                new_status=status,
                reason=reason or f"created ({source})",
                actor=actor,
            ),
        )
        audit.append(
            conn,
            at=now,
            actor=actor,
            action="rule-add",
            target_kind="rule",
            target_id=rid,
            reason=reason,
            summary={
                "score": score,
                "status": status,
                "source": source,
                "agent": agent,
                "domain": domain,
                "preview": audit.snippet(text),
            },
        )
        return rid

    def _change(self, rule_id: int, action: str, reason: str, fn: Callable[[Rule, float], Changes]) -> Rule:
        """Apply `fn(rule, now) -> column changes` to one rule, with history and audit rows."""
        rid = check_rule_id(rule_id)
        actor = self.ctx.actor

        def write(conn: Any) -> None:
            r = conn.execute("SELECT * FROM rules WHERE id = ?", (rid,)).fetchone()
            if r is None:
                raise NotFound(f"no rule with id {rule_id}")
            before = row_to_rule(r)
            now = self.ctx.clock.now()
            changes = fn(before, now)
            # Status follows the band, except for pinned rules and retired ones (only revive or
            # an operator's set-score brings a retired rule back).
            if (
                "score" in changes
                and "status" not in changes
                and not before.pinned
                and before.status != "retired"
            ):
                changes["status"] = band(changes["score"])
            cols = ", ".join(f"{c} = ?" for c in changes)  # names come from this module only
            conn.execute(
                f"UPDATE rules SET {cols}, updated_at = ? WHERE id = ?", [*changes.values(), now, rid]
            )
            new_score = changes.get("score", before.score)
            new_status = changes.get("status", before.status)
            if new_score != before.score or new_status != before.status:
                rule_history.record(
                    conn,
                    rule_history.RuleChange(
                        rule_id=rid,
                        at=now,
                        new_score=new_score,
                        new_status=new_status,
                        reason=reason or action,
                        actor=actor,
                        old_score=before.score,
                        old_status=before.status,
                    ),
                )
            summary = {c: [getattr(before, c, None), v] for c, v in changes.items()}
            audit.append(
                conn,
                at=now,
                actor=actor,
                action=action,
                target_kind="rule",
                target_id=rid,
                reason=reason,
                summary=summary,
            )

        self.ctx.store.write(write)
        return self.get(rid)

    def pin(self, rule_id: int, reason: str = "") -> Rule:
        """Freeze a rule: no decay, and its status no longer follows its score."""
        return self._change(rule_id, "rule-pin", reason, lambda r, now: {"pinned": 1})

    def unpin(self, rule_id: int, reason: str = "") -> Rule:
        """Unfreeze: status returns to the score's band; decay counts from now."""
        return self._change(
            rule_id,
            "rule-unpin",
            reason,
            lambda r, now: {"pinned": 0, "status": band(r.score), "last_decayed_at": now},
        )

    def retire(self, rule_id: int, reason: str = "") -> Rule:
        """A person retires a rule (any band, critical included). Kept, revivable."""

        def fn(r: Rule, now: float) -> Changes:
            if r.status == "retired":
                raise InvalidInput(f"rule {r.id} is already retired")
            return {"status": "retired"}

        return self._change(rule_id, "rule-retire", reason, fn)

    def revive(self, rule_id: int, reason: str = "", score: float | None = None) -> Rule:
        """Bring a retired rule back: score at least 5 (or `score`), reinforced now."""

        def fn(r: Rule, now: float) -> Changes:
            if r.status != "retired":
                raise InvalidInput(f"rule {r.id} is {r.status}, not retired")
            s = check_score(score) if score is not None else max(r.score, REVIVE_SCORE)
            if band(s) == "retired":
                raise InvalidInput(f"a revived rule needs a score of 3 or more, not {s:g}")
            return {"score": s, "status": band(s), "last_reinforced_at": now, "last_decayed_at": None}

        return self._change(rule_id, "rule-revive", reason, fn)

    def reinforce(self, rule_id: int, reason: str = "") -> Rule:
        """The rule proved useful: score + rule_reinforce_boost (max 10) and its decay clock resets."""
        boost = self.ctx.settings.decay.rule_reinforce_boost
        return self._change(
            rule_id,
            "rule-reinforce",
            reason,
            lambda r, now: {
                "score": clamp_score(r.score + boost),
                "last_reinforced_at": now,
                "last_decayed_at": None,
            },
        )

    def record_violation(self, rule_id: int, reason: str = "") -> Rule:
        """An agent broke the rule: counted; the rule proved relevant, so it gains
        rule_violation_boost and its decay clock resets."""
        boost = self.ctx.settings.decay.rule_violation_boost
        return self._change(
            rule_id,
            "rule-violate",
            reason,
            lambda r, now: {
                "violations": r.violations + 1,
                "score": clamp_score(r.score + boost),
                "last_reinforced_at": now,
                "last_decayed_at": None,
            },
        )

    def set_score(self, rule_id: int, score: float, reason: str) -> Rule:
        """An operator's judgement: the new score counts as of now (the next daily loss is a day
        away at the earliest). A reason is required."""
        s = check_score(score)
        if not (reason or "").strip():
            raise InvalidInput("setting a rule's score needs a reason")
        return self._change(
            rule_id,
            "rule-set-score",
            reason,
            lambda r, now: {"score": s, "last_decayed_at": now, **({} if r.pinned else {"status": band(s)})},
        )

    # -- rejections ------------------------------------------------------------------------------------
    def reject(
        self,
        text: str,
        *,
        agent: str = "",
        user: str = "",
        domain: str = "",
        reason: str = "",
        score: float = REJECTION_SCORE,
    ) -> RejectResult:
        """ "The user said no to X": a pinned memory of category `rejected` and a critical rule
        (score >= 9) that points at it. The memory is written first (embedding it may wait for
        the model, which must not happen while holding the write lock), the rule right after."""
        text = check_text(text, "rejection", limit=10_000)
        s = check_score(score)
        if band(s) != "critical":
            raise InvalidInput(f"a rejection is a critical rule: score 9 or more, not {s:g}")
        mid = self.memories.add(
            text,
            kind="semantic",
            category="rejected",
            agent=agent,
            user=user,
            importance=1.0,
            pinned=True,
            reason=reason or "rejection",
        )
        rid = self.ctx.store.write(
            lambda c: self.insert(
                c,
                text,
                score=s,
                domain=domain,
                agent=agent,
                source="rejection",
                pinned=False,
                reason=reason or "rejection",
                created_at=None,
                metadata={"memory_id": mid},
            )
        )
        return RejectResult(mid, rid)
