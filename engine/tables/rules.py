"""The `rules` table gateway: every INSERT, UPDATE and DELETE of a rule row goes through these
functions, inside the caller's transaction (the rules service, the decay pass, the curator's
apply and undo). Column names are fixed here, never input. A forget's cascade is the one
exception: it erases rows of any table by id (engine/forget/select.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.sql import marks

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
    bad = set(values) - INSERTABLE
    if bad:
        raise ValueError(f"not an insertable rule column: {', '.join(sorted(bad))}")
    cols = list(values)
    got = conn.execute(
        f"INSERT INTO rules({', '.join(cols)}) VALUES ({marks(len(cols))}) RETURNING id",
        [values[c] for c in cols],
    ).fetchall()
    return int(got[0][0])


def update(conn: Any, rule_id: int, changes: Mapping[str, Any], now: float) -> None:
    """Set `changes` (columns of UPDATABLE) and updated_at."""
    bad = set(changes) - UPDATABLE
    if bad:
        raise ValueError(f"not an updatable rule column: {', '.join(sorted(bad))}")
    cols = ", ".join(f"{c} = ?" for c in changes)
    conn.execute(f"UPDATE rules SET {cols}, updated_at = ? WHERE id = ?", [*changes.values(), now, rule_id])


def decay_many(conn: Any, rows: Iterable[tuple[float, str, float, int]], now: float) -> None:
    """A decay pass's batch: (score, status, decayed_to, id) per rule, in one statement."""
    conn.executemany(
        "UPDATE rules SET score = ?, status = ?, last_decayed_at = ?, updated_at = ? WHERE id = ?",
        [(score, status, decayed_to, now, rid) for score, status, decayed_to, rid in rows],
    )


def restore(conn: Any, row: Mapping[str, Any], columns: Iterable[str]) -> None:
    """Write a row back exactly as recorded, every column including updated_at (a curator undo).
    `columns`: the table's real columns; a recorded name outside them is refused."""
    cols = [c for c in row if c != "id"]
    bad = set(cols) - set(columns)
    if bad:
        raise ValueError(f"not a rule column: {', '.join(sorted(bad))[:200]}")
    conn.execute(
        f"UPDATE rules SET {', '.join(f'{c} = ?' for c in cols)} WHERE id = ?",
        [row[c] for c in cols] + [row["id"]],
    )


def delete(conn: Any, rule_ids: Sequence[int]) -> None:
    """Delete rules by id (a curator undo removes the rule its apply created; history cascades)."""
    for rid in rule_ids:
        conn.execute("DELETE FROM rules WHERE id = ?", (rid,))
