"""Applying and undoing proposals, each in one transaction.

Apply records the prior state of every row it touches (and the state it left them in) in the
proposal's `snapshot`; undo refuses if anything changed since, then deletes what apply created and
writes the prior rows back column for column, so a dump after undo equals a dump before apply.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from engine.audit import log as audit
from engine.curator import state as curator_state
from engine.curator.plan import ApplyPlan, UndoPlan, build_plan, undo_plan
from engine.errors import InvalidInput
from engine.storage.gateways.rule_history import RuleChange
from engine.storage.port import Connection
from engine.types import load_json

if TYPE_CHECKING:
    from engine.context import Context
    from engine.memories import MemoriesService


def _row(conn: Connection, table: str, rid: int) -> dict | None:
    return conn.curator_queries.touched_row(table, rid)


def _restore(conn: Connection, table: str, row: dict) -> None:
    cols = [c for c in row if c != "id"]
    # Column names come from a stored snapshot (data): only the table's real columns pass.
    known = conn.curator_queries.columns(table)
    if not set(cols) <= known:
        raise InvalidInput(
            f"snapshot names unknown {table} column(s): {', '.join(sorted(set(cols) - known))[:200]}"
        )
    (conn.memories if table == "memories" else conn.rules).restore(row, known)


class Applier:
    """One apply (or undo) inside the caller's write transaction."""

    def __init__(
        self,
        ctx: Context,
        memories: MemoriesService,
        conn: Connection,
        proposal_row,
        now: float,
        reason: str = "",
    ) -> None:
        self.ctx, self.memories = ctx, memories
        self.conn, self.p, self.now = conn, proposal_row, now
        self.reason = reason
        self.members = curator_state.parse_members(proposal_row["members"])
        if not self.members:
            raise InvalidInput(
                f"proposal {proposal_row['id']} has no readable member list; reject it"
                " and run the curator again"
            )
        self.evidence = load_json(proposal_row["evidence"])
        if not isinstance(self.evidence, dict):
            self.evidence = {}
        self.before: dict[str, dict] = {"memories": {}, "rules": {}}
        self.created: dict[str, list[int]] = {"memories": [], "rules": [], "rule_history": []}
        self.plan: ApplyPlan  # set by apply()

    # -- helpers ---------------------------------------------------------------------------------
    def _touch(self, table: str, rid: int) -> dict:
        row = _row(self.conn, table, rid)
        if row is None:
            raise InvalidInput(f"proposal {self.p['id']} is stale: {table[:-1]} {rid} no longer exists")
        self.before[table].setdefault(str(rid), row)
        return row

    def _history(self, rule_id: int, old: dict | None, new_score: float, new_status: str) -> None:
        hid = self.conn.rule_history.record(
            RuleChange(
                rule_id=rule_id,
                at=self.now,
                new_score=new_score,
                new_status=new_status,
                reason=f"proposal {self.p['id']} ({self.p['kind']})"
                + (f": {self.reason}" if self.reason else ""),
                actor=self.ctx.actor,
                old_score=None if old is None else old["score"],
                old_status=None if old is None else old["status"],
            ),
        )
        self.created["rule_history"].append(hid)

    def _vector(self, memory_id: int) -> np.ndarray | None:
        got = self.ctx.vectors.backend.embedding(self.conn, memory_id)
        return None if got is None else np.frombuffer(got, dtype=np.float32).copy()

    def _live_memory(self, mid: int) -> dict:
        r = self._touch("memories", mid)
        if r["tier"] == "archived" or r["absorbed_into"] is not None:
            raise InvalidInput(
                f"proposal {self.p['id']} is stale: memory {mid} is already archived"
                " or merged; reject it and run the curator again"
            )
        return r

    def _live_rule(self, rid: int) -> dict:
        r = self._touch("rules", rid)
        if r["status"] == "retired" or r["absorbed_into"] is not None:
            raise InvalidInput(f"proposal {self.p['id']} is stale: rule {rid} is already retired")
        return r

    # -- apply -----------------------------------------------------------------------------------
    def apply(self, text: str | None, vector, expected: ApplyPlan | None = None) -> tuple[int | None, dict]:
        """Apply with `text` (the operator's edit, None: the proposal's own). `expected`: the plan
        the operator confirmed; the apply refuses if the plan built now differs, and then does
        exactly what the plan says (engine/curator/plan.py)."""
        kind, target = self.p["kind"], self.p["target_kind"]
        fn = {
            ("merge", "memory"): self._merge_memories,
            ("merge", "rule"): self._merge_rules,
            ("archive", "memory"): self._archive,
            ("promote", "memory"): self._promote,
            ("retire", "rule"): self._retire,
        }.get((kind, target))
        if fn is None:
            raise InvalidInput(f"proposal {self.p['id']}: unknown kind {kind}/{target}")
        # Only what was proposed: a member edited, archived, used or merged since voids it; the
        # members stay as checked until the apply commits (row locks on a server).
        table = "memories" if target == "memory" else "rules"
        self.conn.curator_queries.lock_for_apply(self.p["id"], table, self.members)
        curator_state.check_unchanged(self.conn, self.p, self.evidence)
        plan = build_plan(self.conn, self.p, text)
        if expected is not None and expected != plan:
            raise InvalidInput(
                f"proposal {self.p['id']} changed since its confirmation was shown; nothing was "
                "applied: look at it again"
            )
        self.plan = plan
        try:
            result = fn(plan.text, vector)
        except InvalidInput:
            raise
        except (TypeError, ValueError, OverflowError, KeyError) as exc:
            # A malformed member row (odd types, non-finite numbers): refuse, change nothing.
            raise InvalidInput(
                f"proposal {self.p['id']} cannot be applied: a member row is malformed"
                f" ({type(exc).__name__}: {str(exc)[:120]}); run `memconsole doctor`"
            ) from None
        after = {t: {k: _row(self.conn, t, int(k)) for k in rows} for t, rows in self.before.items()}
        for t, ids in self.created.items():
            if t in after:
                for i in ids:
                    after[t][str(i)] = _row(self.conn, t, i)
        snapshot = {"before": self.before, "after": after, "created": self.created}
        return result, snapshot

    def _merge_memories(self, text, vector) -> int:
        rows = [self._live_memory(m) for m in self.members]
        surv = next(r for r in rows if r["id"] == self.plan.survivor_id)  # the plan's survivor
        strengths = [self.memories.current_strength(r, self.now) for r in rows]
        meta = load_json(surv["metadata"])
        meta.update(
            {
                "merged_from": [r["id"] for r in rows],
                "proposal_id": self.p["id"],
                "provenance": [
                    {"memory_id": r["id"], "session_id": r["session_id"], "message_id": r["message_id"]}
                    for r in rows
                ],
            }
        )
        s = max(strengths)
        new_id = self.conn.memories.insert_row(
            {
                "content": text,
                "kind": surv["kind"],
                "category": surv["category"],
                "tier": "core" if any(r["tier"] == "core" for r in rows) else "active",
                "agent": surv["agent"],
                "user": surv["user"],
                "importance": max(r["importance"] for r in rows),
                "strength": s,
                "anchor_strength": s,
                "access_count": sum(r["access_count"] for r in rows),
                "created_at": min(r["created_at"] for r in rows),
                "last_accessed_at": max(
                    (r["last_accessed_at"] for r in rows if r["last_accessed_at"] is not None), default=None
                ),
                "last_reinforced_at": self.now,
                "pinned": 1 if any(r["pinned"] for r in rows) else 0,
                "session_id": surv["session_id"],
                "message_id": surv["message_id"],
                "metadata": json.dumps(meta, ensure_ascii=False),
                "updated_at": self.now,
            },
        )
        self.created["memories"].append(new_id)
        if vector is None and text == surv["content"]:
            vector = self._vector(surv["id"])  # same text: the survivor's vector
        if vector is not None:
            self.ctx.vectors.put(self.conn, new_id, vector, _row(self.conn, "memories", new_id))
        for r in rows:
            self.conn.memories.update(r["id"], {"tier": "archived", "absorbed_into": new_id}, self.now)
        return new_id

    def _merge_rules(self, text, vector) -> int:
        rows = [self._live_rule(m) for m in self.members]
        sid = int(self.plan.keeps_id or 0)  # the plan's survivor keeps its id
        surv = next(r for r in rows if r["id"] == sid)
        bonus = self.ctx.settings.curator.merged_rule_bonus
        score = min(10.0, max(float(r["score"]) for r in rows) + bonus)
        new_text = text
        meta = load_json(surv["metadata"])
        meta.setdefault("merged_from", [])
        meta["merged_from"] = sorted(set(meta["merged_from"]) | {r["id"] for r in rows if r["id"] != sid})
        status = surv["status"] if surv["pinned"] else band(score)
        self.conn.rules.update(
            sid,
            {
                "text": new_text,
                "score": score,
                "status": status,
                "metadata": json.dumps(meta, ensure_ascii=False),
            },
            self.now,
        )
        self._history(sid, surv, score, status)
        for r in rows:
            if r["id"] == sid:
                continue
            self.conn.rules.update(r["id"], {"status": "retired", "absorbed_into": sid}, self.now)
            self._history(r["id"], r, float(r["score"]), "retired")
        return sid

    def _archive(self, text, vector) -> int:
        r = self._live_memory(self.members[0])
        if r["pinned"] or r["tier"] == "core":
            raise InvalidInput(f"proposal {self.p['id']} is stale: memory {r['id']} is now pinned or core")
        active = max(r["last_accessed_at"] or 0.0, r["last_reinforced_at"] or 0.0)
        if active > float(self.p["created_at"]):
            # "No activity for N days" was the evidence; activity since then voids it.
            raise InvalidInput(
                f"proposal {self.p['id']} is stale: memory {r['id']} was used after the "
                "proposal was made; reject it and run the curator again"
            )
        self.conn.memories.update(r["id"], {"tier": "archived"}, self.now)
        return r["id"]

    def _promote(self, text, vector) -> int:
        r = self._live_memory(self.members[0])
        score = float(self.evidence.get("rule_score") or self.ctx.settings.curator.promote_rule_score)
        rid = self.conn.rules.insert(
            {
                "text": text,
                "domain": "",
                "agent": r["agent"],
                "source": r["category"] if r["category"] in ("learning", "discovery") else "manual",
                "score": score,
                "status": band(score),
                "last_reinforced_at": self.now,
                "created_at": self.now,
                "metadata": json.dumps({"promoted_from": r["id"], "proposal_id": self.p["id"]}),
                "updated_at": self.now,
            },
        )
        self.created["rules"].append(rid)
        self._history(rid, None, score, band(score))
        return rid

    def _retire(self, text, vector) -> int:
        r = self._live_rule(self.members[0])
        if (r["last_reinforced_at"] or 0.0) > float(self.p["created_at"]):
            raise InvalidInput(
                f"proposal {self.p['id']} is stale: rule {r['id']} was reinforced after the "
                "proposal was made; reject it and run the curator again"
            )
        self.conn.rules.update(r["id"], {"status": "retired"}, self.now)
        self._history(r["id"], r, float(r["score"]), "retired")
        return r["id"]


def band(score: float) -> str:
    """A rule's status follows its score band (see engine/rules.py): 9+ critical, 5+ active, 3+ dormant."""
    return "critical" if score >= 9 else "active" if score >= 5 else "dormant" if score >= 3 else "retired"


def undo(conn: Connection, proposal_row, expected: UndoPlan | None = None) -> dict:
    """Put back exactly what apply found, and delete what it created: the undo plan's lists
    (refused if it differs from `expected`, the plan the operator confirmed). Refuses if a
    touched row changed after the apply."""
    plan = undo_plan(proposal_row)
    if expected is not None and expected != plan:
        raise InvalidInput(
            f"proposal {proposal_row['id']} changed since its undo confirmation was shown; nothing was undone"
        )
    snap = load_json(proposal_row["snapshot"])
    for table, rows in snap["after"].items():
        if table not in ("memories", "rules"):
            raise InvalidInput(f"proposal {proposal_row['id']}'s snapshot names an unknown table")
        for rid, row in rows.items():
            now_row = _row(conn, table, int(rid))
            if now_row != row:
                raise InvalidInput(
                    f"cannot undo proposal {proposal_row['id']} exactly: {table[:-1]} {rid} changed "
                    "after it was applied"
                )
    conn.rule_history.remove(plan.deletes["rule_history"])
    # Sources first lose their link, then the merged record goes (its FTS and vec0 rows with it).
    for table in ("memories", "rules"):
        for rid in plan.restores.get(table, {}):
            _restore(conn, table, snap["before"][table][str(rid)])
    conn.memories.delete(plan.deletes["memories"])
    conn.rules.delete(plan.deletes["rules"])
    return {
        "restored": sum(len(v) for v in plan.restores.values()),
        "deleted": {k: len(v) for k, v in plan.deletes.items()},
    }


def record(
    conn: Connection,
    actor: str,
    pid: int,
    action: str,
    now: float,
    reason: str,
    summary: dict,
    target_kind: str = "proposal",
) -> None:
    audit.append(
        conn,
        at=now,
        actor=actor,
        action=action,
        target_kind=target_kind,
        target_id=pid,
        reason=reason,
        summary=summary,
    )
