"""What every table gateway shares: a row written column by column, where the column names come
from the caller's mapping and are checked against the gateway's fixed set before any SQL is built
(names are never input; values always go as parameters)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.sql import marks


def checked(names: Iterable[str], allowed: Iterable[str], what: str) -> list[str]:
    """`names` as a list, or ValueError naming those outside `allowed`."""
    cols = list(names)
    bad = set(cols) - set(allowed)
    if bad:
        raise ValueError(f"not {what}: {', '.join(sorted(bad))[:200]}")
    return cols


def insert(conn: Any, table: str, values: Mapping[str, Any], allowed: Iterable[str], what: str) -> Any:
    """INSERT one row; returns its id (RETURNING id)."""
    cols = checked(values, allowed, what)
    got = conn.execute(
        f"INSERT INTO {table}({', '.join(cols)}) VALUES ({marks(len(cols))}) RETURNING id",
        [values[c] for c in cols],
    ).fetchall()
    return got[0][0]


def update(
    conn: Any, table: str, key: Any, changes: Mapping[str, Any], allowed: Iterable[str], what: str
) -> None:
    """UPDATE the row whose id is `key`: set `changes`."""
    cols = checked(changes, allowed, what)
    conn.execute(
        f"UPDATE {table} SET {', '.join(f'{c} = ?' for c in cols)} WHERE id = ?",
        [*(changes[c] for c in cols), key],
    )


def restore(conn: Any, table: str, row: Mapping[str, Any], columns: Iterable[str], what: str) -> None:
    """Write a row back exactly as recorded, every column (a curator undo); `columns`: the table's
    real columns."""
    update(conn, table, row["id"], {c: row[c] for c in row if c != "id"}, columns, what)
