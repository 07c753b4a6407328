"""RulesMixin: rules with scores in bands, their score history, and rejections.

Bands: 9–10 critical (never decays on its own; only a person retires it), 5–8 active, 3–4 dormant,
below 3 retired (revivable, never deleted). Status follows the score's band unless the rule is
pinned. Every score or status change writes a rule_history row (the chart's series) and an audit
row. Near-duplicate rules are not merged here: that is a curator proposal.
"""
from __future__ import annotations

import math

from . import audit
from .clock import DAY
from .decay import band, clamp_score
from .errors import InvalidInput, NotFound
from .lifecycle_types import (RULE_SOURCES, RULE_STATUSES, RejectResult, Rule, RuleDetail,
                              RuleHistoryPoint)
from .memories import check_text
from .query import plan
from .types import load_json

REJECTION_SCORE = 10.0
REVIVE_SCORE = 5.0            # a revived rule re-enters the active band at least here
ORDERS = {"score": "score DESC, id", "recent": "coalesce(last_reinforced_at, created_at) DESC, id",
          "created": "created_at DESC, id", "violations": "violations DESC, score DESC, id",
          "id": "id"}


def row_to_rule(r) -> Rule:
    return Rule(id=r["id"], text=r["text"], domain=r["domain"], agent=r["agent"], source=r["source"],
                score=float(r["score"]), status=r["status"], violations=int(r["violations"]),
                last_reinforced_at=r["last_reinforced_at"], last_decayed_at=r["last_decayed_at"],
                created_at=r["created_at"], pinned=bool(r["pinned"]),
                absorbed_into=r["absorbed_into"], metadata=load_json(r["metadata"]))


def _score(value) -> float:
    try:
        s = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"a rule score is a number from 0 to 10, not {value!r}") from None
    if math.isnan(s) or not 0.0 <= s <= 10.0:
        raise InvalidInput(f"a rule score is a number from 0 to 10, not {value}")
    return s


def _rule_id(value) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"a rule id is a whole number, not {value!r}") from None


def _as_tuple(v) -> tuple | None:
    if v is None:
        return None
    return (v,) if isinstance(v, str) else tuple(v)


class RulesMixin:
    # -- reads ---------------------------------------------------------------------------------------
    def get_rule(self, rule_id: int) -> Rule:
        r = self.store.read_one("SELECT * FROM rules WHERE id = ?", (_rule_id(rule_id),))
        if r is None:
            raise NotFound(f"no rule with id {rule_id}")
        return row_to_rule(r)

    def list_rules(self, *, status: str | list[str] | None = None, agent: str | None = None,
                   domain: str | None = None, source: str | None = None,
                   min_score: float | None = None, max_score: float | None = None,
                   pinned: bool | None = None, query: str | None = None,
                   include_global: bool = False, include_absorbed: bool = False,
                   order: str = "score", limit: int = 500) -> list[Rule]:
        """Rules matching every given filter. `status` may be one status or several; `agent`
        with `include_global` also returns rules with no agent; `query` is full-text over the text;
        `order` is one of score | recent | created | violations | id."""
        where, params = ["1=1"], []
        statuses = _as_tuple(status)
        if statuses:
            bad = [s for s in statuses if s not in RULE_STATUSES]
            if bad:
                raise InvalidInput(f"unknown rule status {bad[0]!r}; use one of {', '.join(RULE_STATUSES)}")
            where.append(f"status IN ({','.join('?' * len(statuses))})"); params += statuses
        if agent is not None:
            where.append("(agent = ? OR agent = '')" if include_global else "agent = ?"); params.append(agent)
        if domain is not None:
            where.append("domain = ?"); params.append(domain)
        if source is not None:
            where.append("source = ?"); params.append(source)
        if min_score is not None:
            where.append("score >= ?"); params.append(float(min_score))
        if max_score is not None:
            where.append("score <= ?"); params.append(float(max_score))
        if pinned is not None:
            where.append("pinned = ?"); params.append(1 if pinned else 0)
        if not include_absorbed:
            where.append("absorbed_into IS NULL")
        if query:
            p = plan(query)
            if p.index != "words":
                like = p.like or (f"%{query.strip()}%",)
                where.append("(" + " OR ".join("text LIKE ? ESCAPE '\\'" for _ in like) + ")")
                params += list(like)
            else:
                where.append("id IN (SELECT rowid FROM rules_fts WHERE rules_fts MATCH ?)")
                params.append(p.match)
        if order not in ORDERS:
            raise InvalidInput(f"unknown order {order!r}; use one of {', '.join(ORDERS)}")
        rows = self.store.read(f"SELECT * FROM rules WHERE {' AND '.join(where)} "
                               f"ORDER BY {ORDERS[order]} LIMIT ?", [*params, int(limit)])
        return [row_to_rule(r) for r in rows]

    def rule_counts(self, agent: str | None = None) -> dict[str, int]:
        """Rules per status (absorbed rules excluded), every status present."""
        sql = "SELECT status, count(*) FROM rules WHERE absorbed_into IS NULL"
        rows = self.store.read(sql + (" AND agent = ?" if agent is not None else "") + " GROUP BY status",
                               (agent,) if agent is not None else ())
        out = {s: 0 for s in RULE_STATUSES}
        out.update({s: n for s, n in rows})
        return out

    def rule_history(self, rule_id: int) -> list[RuleHistoryPoint]:
        """Every score/status change of a rule, oldest first."""
        rows = self.store.read("SELECT * FROM rule_history WHERE rule_id = ? ORDER BY at, id",
                               (_rule_id(rule_id),))
        return [RuleHistoryPoint(r["at"], r["old_score"], r["new_score"], r["old_status"],
                                 r["new_status"], r["reason"], r["actor"]) for r in rows]

    def rule_detail(self, rule_id: int, days: float = 30) -> RuleDetail:
        """A rule, its score history and its projected score over the next `days`."""
        rule = self.get_rule(rule_id)
        now = self.clock.now()
        last = rule.last_reinforced_at if rule.last_reinforced_at is not None else rule.created_at
        return RuleDetail(rule, self.rule_history(rule.id), self.rule_curve(rule.id, days, now),
                          round(max(0.0, now - last) / DAY, 2))

    # -- writes --------------------------------------------------------------------------------------
    def add_rule(self, text: str, *, score: float = 5.0, domain: str = "", agent: str = "",
                 source: str = "manual", pinned: bool = False, reason: str = "",
                 created_at: float | None = None, metadata: dict | None = None) -> Rule:
        """A new rule; its status is its score's band. Returns the stored rule."""
        rid = self.store.write(lambda c: self._insert_rule(
            c, text, score=score, domain=domain, agent=agent, source=source, pinned=pinned,
            reason=reason, created_at=created_at, metadata=metadata))
        return self.get_rule(rid)

    def _insert_rule(self, conn, text: str, *, score: float, domain: str, agent: str, source: str,
                     pinned: bool, reason: str, created_at: float | None, metadata: dict | None) -> int:
        import json

        text = check_text(text, "rule text", limit=10_000)
        score = _score(score)
        domain = check_text(domain or "", "domain", allow_empty=True, limit=200)
        agent = check_text(agent or "", "agent", allow_empty=True, limit=200)
        if source not in RULE_SOURCES and not str(source).startswith("memory:"):
            raise InvalidInput(f"unknown rule source {source!r}; use one of {', '.join(RULE_SOURCES)}")
        now = self.clock.now()
        at = float(created_at) if created_at is not None else now
        status = band(score)
        cur = conn.execute(
            "INSERT INTO rules(text, domain, agent, source, score, status, last_reinforced_at,"
            " created_at, pinned, metadata, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (text, domain, agent, source, score, status, at, at, 1 if pinned else 0,
             json.dumps(metadata or {}, ensure_ascii=False), now))
        rid = int(cur.lastrowid)
        conn.execute("INSERT INTO rule_history(rule_id, at, old_score, new_score, old_status, new_status,"
                     " reason, actor) VALUES (?,?,?,?,?,?,?,?)",
                     (rid, at, None, score, None, status, reason or f"created ({source})", self.actor))
        audit.append(conn, at=now, actor=self.actor, action="rule-add", target_kind="rule",
                     target_id=rid, reason=reason,
                     summary={"score": score, "status": status, "source": source, "agent": agent,
                              "domain": domain, "preview": audit.snippet(text)})
        return rid

    def _change_rule(self, rule_id: int, action: str, reason: str, fn) -> Rule:
        """Apply `fn(rule, now) -> column changes` to one rule, with history and audit rows."""
        rid = _rule_id(rule_id)

        def write(conn):
            r = conn.execute("SELECT * FROM rules WHERE id = ?", (rid,)).fetchone()
            if r is None:
                raise NotFound(f"no rule with id {rule_id}")
            before = row_to_rule(r)
            now = self.clock.now()
            changes = fn(before, now)
            # Status follows the band, except for pinned rules and retired ones (only revive or
            # an operator's set-score brings a retired rule back).
            if "score" in changes and "status" not in changes and not before.pinned \
                    and before.status != "retired":
                changes["status"] = band(changes["score"])
            cols = ", ".join(f"{c} = ?" for c in changes)      # names come from this module only
            conn.execute(f"UPDATE rules SET {cols}, updated_at = ? WHERE id = ?",
                         [*changes.values(), now, rid])
            new_score = changes.get("score", before.score)
            new_status = changes.get("status", before.status)
            if new_score != before.score or new_status != before.status:
                conn.execute("INSERT INTO rule_history(rule_id, at, old_score, new_score, old_status,"
                             " new_status, reason, actor) VALUES (?,?,?,?,?,?,?,?)",
                             (rid, now, before.score, new_score, before.status, new_status,
                              reason or action, self.actor))
            summary = {c: [getattr(before, c, None), v] for c, v in changes.items()}
            audit.append(conn, at=now, actor=self.actor, action=action, target_kind="rule",
                         target_id=rid, reason=reason, summary=summary)

        self.store.write(write)
        return self.get_rule(rid)

    def pin_rule(self, rule_id: int, reason: str = "") -> Rule:
        """Freeze a rule: no decay, and its status no longer follows its score."""
        return self._change_rule(rule_id, "rule-pin", reason, lambda r, now: {"pinned": 1})

    def unpin_rule(self, rule_id: int, reason: str = "") -> Rule:
        """Unfreeze: status returns to the score's band; decay counts from now."""
        return self._change_rule(rule_id, "rule-unpin", reason, lambda r, now: {
            "pinned": 0, "status": band(r.score), "last_decayed_at": now})

    def retire_rule(self, rule_id: int, reason: str = "") -> Rule:
        """A person retires a rule (any band, critical included). Kept, revivable."""
        def fn(r, now):
            if r.status == "retired":
                raise InvalidInput(f"rule {r.id} is already retired")
            return {"status": "retired"}
        return self._change_rule(rule_id, "rule-retire", reason, fn)

    def revive_rule(self, rule_id: int, reason: str = "", score: float | None = None) -> Rule:
        """Bring a retired rule back: score at least 5 (or `score`), reinforced now."""
        def fn(r, now):
            if r.status != "retired":
                raise InvalidInput(f"rule {r.id} is {r.status}, not retired")
            s = _score(score) if score is not None else max(r.score, REVIVE_SCORE)
            if band(s) == "retired":
                raise InvalidInput(f"a revived rule needs a score of 3 or more, not {s:g}")
            return {"score": s, "status": band(s), "last_reinforced_at": now, "last_decayed_at": None}
        return self._change_rule(rule_id, "rule-revive", reason, fn)

    def reinforce_rule(self, rule_id: int, reason: str = "") -> Rule:
        """The rule proved useful: score + rule_reinforce_boost (max 10) and its decay clock resets."""
        boost = self.settings.decay.rule_reinforce_boost
        return self._change_rule(rule_id, "rule-reinforce", reason, lambda r, now: {
            "score": clamp_score(r.score + boost), "last_reinforced_at": now, "last_decayed_at": None})

    def record_violation(self, rule_id: int, reason: str = "") -> Rule:
        """An agent broke the rule: counted; the rule proved relevant, so it gains
        rule_violation_boost and its decay clock resets."""
        boost = self.settings.decay.rule_violation_boost
        return self._change_rule(rule_id, "rule-violate", reason, lambda r, now: {
            "violations": r.violations + 1, "score": clamp_score(r.score + boost),
            "last_reinforced_at": now, "last_decayed_at": None})

    def set_rule_score(self, rule_id: int, score: float, reason: str) -> Rule:
        """An operator's judgement: the new score counts as of now (the next daily loss is a day
        away at the earliest). A reason is required."""
        s = _score(score)
        if not (reason or "").strip():
            raise InvalidInput("setting a rule's score needs a reason")
        return self._change_rule(rule_id, "rule-set-score", reason, lambda r, now: {
            "score": s, "last_decayed_at": now, **({} if r.pinned else {"status": band(s)})})

    # -- rejections ------------------------------------------------------------------------------------
    def reject(self, text: str, *, agent: str = "", user: str = "", domain: str = "",
               reason: str = "", score: float = REJECTION_SCORE) -> RejectResult:
        """"The user said no to X": a pinned memory of category `rejected` and a critical rule
        (score >= 9) that points at it. The memory is written first (embedding it may wait for
        the model, which must not happen while holding the write lock), the rule right after."""
        text = check_text(text, "rejection", limit=10_000)
        s = _score(score)
        if band(s) != "critical":
            raise InvalidInput(f"a rejection is a critical rule: score 9 or more, not {s:g}")
        mid = self.add_memory(text, kind="semantic", category="rejected", agent=agent, user=user,
                              importance=1.0, pinned=True, reason=reason or "rejection")
        rid = self.store.write(lambda c: self._insert_rule(
            c, text, score=s, domain=domain, agent=agent, source="rejection", pinned=False,
            reason=reason or "rejection", created_at=None, metadata={"memory_id": mid}))
        return RejectResult(mid, rid)
