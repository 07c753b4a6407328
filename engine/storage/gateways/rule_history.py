"""The `rule_history` table gateway (each rule's recorded changes): its only writer. Every row of
a rule's score/status history (the Rules pane's chart series) is inserted here, inside the
caller's transaction. Rows are never updated; a rule's history goes with the rule (ON DELETE
CASCADE) or with a curator undo."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.storage.gateways.base import Gateway

COLUMNS = ("rule_id", "at", "old_score", "new_score", "old_status", "new_status", "reason", "actor")


@dataclass(frozen=True)
class RuleChange:
    """One history row: a rule's score/status moved from old (None: it was created) to new."""

    rule_id: int
    at: float
    new_score: float
    new_status: str | None
    reason: str
    actor: str
    old_score: float | None = None
    old_status: str | None = None

    def values(self) -> tuple[Any, ...]:
        """The row's values in COLUMNS order."""
        return (
            self.rule_id, self.at, self.old_score, self.new_score,
            self.old_status, self.new_status, self.reason, self.actor,
        )  # fmt: skip


class RuleHistoryRows(Gateway):
    """Operations on `rule_history` rows, inside the caller's transaction."""

    def record(self, change: RuleChange) -> int:
        """Insert one history row. Returns its id (a curator undo removes exactly the rows it added)."""
        raise NotImplementedError

    def record_many(self, changes: Iterable[RuleChange]) -> None:
        """Insert many history rows in one statement (a decay pass's batch)."""
        rows = [c.values() for c in changes]
        if rows:
            self._insert_many(rows)

    def of_rule(self, rule_id: int) -> list[Any]:
        """A rule's history rows, oldest first."""
        raise NotImplementedError

    def remove(self, ids: Iterable[int]) -> None:
        """Delete history rows by id: a curator undo takes back exactly the rows its apply added."""
        got = [int(i) for i in ids]
        if got:
            self._delete(got)

    def delete(self, ids: Iterable[int]) -> None:
        """`remove` by its usual name (a forget's cascade)."""
        self.remove(ids)

    # -- what the adapters implement -----------------------------------------------------------------
    def _insert_many(self, rows: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def _delete(self, ids: list[int]) -> None:
        raise NotImplementedError
