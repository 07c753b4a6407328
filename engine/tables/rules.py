"""The `rules` table gateway: every INSERT, UPDATE and DELETE of a rule row goes through these
functions, inside the caller's transaction (the rules service, the decay pass, the curator's
apply and undo, a forget's cascade). Column names are fixed here, never input. A forget's scrub is
the one exception: it redacts quoted text in rows of any table (engine/forget/scrub.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.sql import chunked, marks
from engine.tables import columns
from engine.tables.columns import checked

# What a rule change (operator, decay, curator) may set; `updated_at` is always set with it.
UPDATABLE = frozenset(
    {
        "text", "domain", "agent", "source", "score", "status", "violations", "last_reinforced_at",
        "last_decayed_at", "pinned", "absorbed_into", "metadata",
    }
)  # fmt: skip
INSERTABLE = UPDATABLE | {"created_at", "updated_at"}


def row(conn: Any, rule_id: int) -> Any:
    """The whole row (None: no such rule)."""
    return conn.execute("SELECT * FROM rules WHERE id = ?", (rule_id,)).fetchone()


def insert(conn: Any, values: Mapping[str, Any]) -> int:
    """A new rule built column by column (columns of INSERTABLE). Returns its id."""
    return int(columns.insert(conn, "rules", values, INSERTABLE, "an insertable rule column"))


def update(conn: Any, rule_id: int, changes: Mapping[str, Any], now: float) -> None:
    """Set `changes` (columns of UPDATABLE) and updated_at."""
    checked(changes, UPDATABLE, "an updatable rule column")
    columns.update(conn, "rules", rule_id, {**changes, "updated_at": now}, [*changes, "updated_at"], "")


def decay_many(conn: Any, rows: Iterable[tuple[float, str, float, int]], now: float) -> None:
    """A decay pass's batch: (score, status, decayed_to, id) per rule, in one statement."""
    conn.executemany(
        "UPDATE rules SET score = ?, status = ?, last_decayed_at = ?, updated_at = ? WHERE id = ?",
        [(score, status, decayed_to, now, rid) for score, status, decayed_to, rid in rows],
    )


def restore(conn: Any, row: Mapping[str, Any], real: Iterable[str]) -> None:
    """Write a row back exactly as recorded, every column including updated_at (a curator undo).
    `real`: the table's real columns; a recorded name outside them is refused."""
    columns.restore(conn, "rules", row, real, "a rule column")


def delete(conn: Any, rule_ids: Sequence[int]) -> None:
    """Delete rules by id (a curator undo removes the rule its apply created, a forget's cascade
    the rules promoted from forgotten memories; history cascades)."""
    for chunk in chunked(list(rule_ids)):
        conn.execute(f"DELETE FROM rules WHERE id IN ({marks(len(chunk))})", chunk)
