"""One change to one rule, the way every change is made: status follows the score's band (unless
pinned or retired), and the change writes a rule_history row and an audit row."""

from __future__ import annotations

from collections.abc import Callable

from engine.audit import log as audit
from engine.context import Context
from engine.errors import NotFound
from engine.lifecycle.decay import band
from engine.lifecycle.rule_fields import Changes, check_rule_id, row_to_rule
from engine.lifecycle.types import (
    Rule,
)
from engine.storage.gateways.rule_history import RuleChange
from engine.storage.port import Connection


class RuleChanges:
    """Applies a change to one rule inside one write; composed by `Rules`."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def apply(self, rule_id: int, action: str, reason: str, fn: Callable[[Rule, float], Changes]) -> int:
        """Apply `fn(rule, now) -> column changes` to one rule, with history and audit rows."""
        rid = check_rule_id(rule_id)
        actor = self.ctx.actor

        def write(conn: Connection) -> None:
            r = conn.rules.row(rid)
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
            conn.rules.update(rid, changes, now)
            new_score = changes.get("score", before.score)
            new_status = changes.get("status", before.status)
            if new_score != before.score or new_status != before.status:
                conn.rule_history.record(
                    RuleChange(
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
        return rid
