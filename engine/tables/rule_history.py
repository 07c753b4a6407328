"""The `rule_history` table gateway: every row of a rule's score/status history (the Rules pane's
chart series) is inserted here, inside the caller's transaction. Rows are never updated; a rule's
history goes with the rule (ON DELETE CASCADE) or with a curator undo."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

COLUMNS = "rule_id, at, old_score, new_score, old_status, new_status, reason, actor"


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
        return (
            self.rule_id, self.at, self.old_score, self.new_score,
            self.old_status, self.new_status, self.reason, self.actor,
        )  # fmt: skip


def record(conn: Any, change: RuleChange) -> int:
    """Insert one history row. Returns its id (a curator undo removes exactly the rows it added)."""
    got = conn.execute(
        f"INSERT INTO rule_history({COLUMNS}) VALUES (?,?,?,?,?,?,?,?) RETURNING id", change.values()
    ).fetchall()
    return int(got[0][0])


def record_many(conn: Any, changes: Iterable[RuleChange]) -> None:
    """Insert many history rows in one statement (a decay pass's batch)."""
    conn.executemany(
        f"INSERT INTO rule_history({COLUMNS}) VALUES (?,?,?,?,?,?,?,?)", [c.values() for c in changes]
    )


def of_rule(conn: Any, rule_id: int) -> list[Any]:
    """A rule's history rows, oldest first."""
    return conn.execute("SELECT * FROM rule_history WHERE rule_id = ? ORDER BY at, id", (rule_id,)).fetchall()


def remove(conn: Any, ids: Iterable[int]) -> None:
    """Delete history rows by id: a curator undo takes back exactly the rows its apply added."""
    for hid in ids:
        conn.execute("DELETE FROM rule_history WHERE id = ?", (hid,))
