"""The rules service (`eng.rules`): rules with scores in bands, their score history, and rejections.

Bands: 9–10 critical (never decays on its own; only a person retires it), 5–8 active, 3–4 dormant,
below 3 retired (revivable, never deleted). Status follows the score's band unless the rule is
pinned. Every score or status change writes a rule_history row (the chart's series, through
the rule_history gateway) and an audit row. Near-duplicate rules are not merged here: that
is a curator proposal.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Sequence
from typing import Protocol

from engine.audit import log as audit
from engine.context import Context
from engine.errors import InvalidInput, cut
from engine.lifecycle.decay import band, clamp_score
from engine.lifecycle.rule_change import RuleChanges
from engine.lifecycle.rule_fields import REJECTION_SCORE, REVIVE_SCORE, Changes, check_score
from engine.lifecycle.rule_reads import RuleReads
from engine.lifecycle.types import (
    RULE_SOURCES,
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
from engine.storage.gateways.rule_history import RuleChange
from engine.storage.port import Connection


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


class Rules:
    """`eng.rules`: reads, the operator's and agents' changes (each with history and audit rows),
    and rejections. `memories` stores the memory a rejection points at."""

    def __init__(self, ctx: Context, memories: MemoryAdder) -> None:
        self.ctx = ctx
        self.memories = memories
        self.reads = RuleReads(ctx)
        self.changes = RuleChanges(ctx)

    # -- reads (RuleReads) -----------------------------------------------------------------------------
    def get(self, rule_id: int) -> Rule:
        return self.reads.get(rule_id)

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
        """Rules matching every given filter (see RuleReads.list)."""
        return self.reads.list(
            status=status, agent=agent, domain=domain, source=source, min_score=min_score,
            max_score=max_score, pinned=pinned, query=query, include_global=include_global,
            include_absorbed=include_absorbed, order=order, limit=limit,
        )  # fmt: skip

    def counts(self, agent: str | None = None) -> dict[str, int]:
        return self.reads.counts(agent)

    def history(self, rule_id: int) -> builtins.list[RuleHistoryPoint]:
        return self.reads.history(rule_id)

    def curve(self, rule_id: int, days: float = 30, now: float | None = None) -> DecayCurve:
        return self.reads.curve(rule_id, days, now)

    def detail(self, rule_id: int, days: float = 30) -> RuleDetail:
        return self.reads.detail(rule_id, days)

    def facets(self) -> RuleFacets:
        return self.reads.facets()

    def top(
        self, conn: Connection, agent: str | None, statuses: tuple[RuleStatus, ...], limit: int
    ) -> builtins.list[Rule]:
        """Inside the caller's read: the best rules for boot and the pre-action gate."""
        return self.reads.top(conn, agent, statuses, limit)

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
        conn: Connection,
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
            raise InvalidInput(f"unknown rule source {cut(source)}; use one of {', '.join(RULE_SOURCES)}")
        actor, now = self.ctx.actor, self.ctx.clock.now()
        at = float(created_at) if created_at is not None else now
        status = band(score)
        rid = conn.rules.insert(
            {
                "text": text,
                "domain": domain,
                "agent": agent,
                "source": source,
                "score": score,
                "status": status,
                "last_reinforced_at": at,
                "created_at": at,
                "pinned": 1 if pinned else 0,
                "metadata": json.dumps(metadata or {}, ensure_ascii=False),
                "updated_at": now,
            },
        )
        conn.rule_history.record(
            RuleChange(
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
                "preview": audit.preview(text),
            },
        )
        return rid

    def _change(self, rule_id: int, action: str, reason: str, fn: Callable[[Rule, float], Changes]) -> Rule:
        """Apply `fn(rule, now) -> column changes` to one rule, with history and audit rows."""
        return self.get(self.changes.apply(rule_id, action, reason, fn))

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
