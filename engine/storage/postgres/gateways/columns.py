"""A row written column by column in PostgreSQL's SQL: names checked against the gateway's fixed
set (engine/storage/gateways/base.checked) and quoted (`user` is a reserved word here), values
always parameters; id sets go as one array parameter (`= ANY(%s)`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from engine.storage.gateways.base import checked

if TYPE_CHECKING:
    from engine.storage.port import Connection


def ident(name: str) -> str:
    """A checked column name as PostgreSQL reads it."""
    return f'"{name}"'


def insert(conn: Connection, table: str, values: Mapping[str, Any], allowed: Iterable[str], what: str) -> Any:
    """INSERT one row; returns its id."""
    cols = checked(values, allowed, what)
    got = conn.execute(
        f"INSERT INTO {table}({', '.join(ident(c) for c in cols)})"
        f" VALUES ({', '.join(['%s'] * len(cols))}) RETURNING id",
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
            f"UPDATE {table} SET {', '.join(f'{ident(c)} = %s' for c in cols)} WHERE id = %s",
            [*(changes[c] for c in cols), key],
        )


def restore(conn: Connection, table: str, row: Mapping[str, Any], columns: Iterable[str], what: str) -> None:
    """Write a row back exactly as recorded, every column (a curator undo)."""
    update(conn, table, row["id"], {c: row[c] for c in row if c != "id"}, columns, what)
