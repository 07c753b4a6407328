"""The `rules` table's old gateway module: delegates to `conn.rules` (engine/storage/gateways/
rules.py and each adapter's), kept until the lead removes the shims."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.storage.gateways.rules import INSERTABLE, UPDATABLE

if TYPE_CHECKING:
    from engine.storage.port import Connection

__all__ = ["INSERTABLE", "UPDATABLE", "decay_many", "delete", "insert", "restore", "row", "update"]


def row(conn: Connection, *a: Any, **k: Any) -> Any:
    return conn.rules.row(*a, **k)


def insert(conn: Connection, *a: Any, **k: Any) -> int:
    return conn.rules.insert(*a, **k)


def update(conn: Connection, *a: Any, **k: Any) -> None:
    return conn.rules.update(*a, **k)


def decay_many(conn: Connection, *a: Any, **k: Any) -> None:
    return conn.rules.decay_many(*a, **k)


def restore(conn: Connection, *a: Any, **k: Any) -> None:
    return conn.rules.restore(*a, **k)


def delete(conn: Connection, *a: Any, **k: Any) -> None:
    return conn.rules.delete(*a, **k)
