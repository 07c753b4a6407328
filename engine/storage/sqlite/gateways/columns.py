"""A row written column by column in SQLite's SQL: names checked against the gateway's fixed set
(engine/storage/gateways/base.checked), values always parameters; `?` lists for id sets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from engine.storage.gateways.base import checked

if TYPE_CHECKING:
    from engine.storage.port import Connection


def marks(n: int) -> str:
    """`?,?,?` for n parameters (n >= 1)."""
    if n < 1:
        raise ValueError("an id list needs at least one id")
    return ",".join("?" * n)


def in_list(column: str, ids: Sequence[object]) -> tuple[str, list[object]]:
    """(`column IN (?,?)`, params) for a non-empty id list; `1 = 0` for an empty one."""
    if not ids:
        return "1 = 0", []
    return f"{column} IN ({marks(len(ids))})", list(ids)


def insert(conn: Connection, table: str, values: Mapping[str, Any], allowed: Iterable[str], what: str) -> Any:
    """INSERT one row; returns its id."""
    cols = checked(values, allowed, what)
    got = conn.execute(
        f"INSERT INTO {table}({', '.join(cols)}) VALUES ({marks(len(cols))}) RETURNING id",
        [values[c] for c in cols],
    ).fetchall()
    return got[0][0]


def update(
    conn: Connection, table: str, key: Any, changes: Mapping[str, Any], allowed: Iterable[str], what: str
) -> None:
    """UPDATE the row whose id is `key`: set `changes`."""
    cols = checked(changes, allowed, what)
    if cols:
        conn.execute(
            f"UPDATE {table} SET {', '.join(f'{c} = ?' for c in cols)} WHERE id = ?",
            [*(changes[c] for c in cols), key],
        )


def restore(conn: Connection, table: str, row: Mapping[str, Any], columns: Iterable[str], what: str) -> None:
    """Write a row back exactly as recorded, every column (a curator undo)."""
    update(conn, table, row["id"], {c: row[c] for c in row if c != "id"}, columns, what)
