"""Shim: the `memories` gateway is `conn.memories` (engine/storage/gateways/memories.py); these
delegates keep older callers working until they call the gateway directly."""

from __future__ import annotations

from typing import Any

from engine.storage.gateways.memories import INSERTABLE, UPDATABLE, Kind, NewMemory, Tier

__all__ = ["INSERTABLE", "UPDATABLE", "Kind", "NewMemory", "Tier"]


def row(conn: Any, *a: Any, **k: Any) -> Any:
    return conn.memories.row(*a, **k)


def insert(conn: Any, *a: Any, **k: Any) -> int:
    return conn.memories.insert(*a, **k)


def update(conn: Any, *a: Any, **k: Any) -> None:
    return conn.memories.update(*a, **k)


def reinforce(conn: Any, *a: Any, **k: Any) -> None:
    return conn.memories.reinforce(*a, **k)


def set_embedded(conn: Any, *a: Any, **k: Any) -> None:
    return conn.memories.set_embedded(*a, **k)


def delete(conn: Any, *a: Any, **k: Any) -> int:
    return conn.memories.delete(*a, **k)


def insert_row(conn: Any, *a: Any, **k: Any) -> int:
    return conn.memories.insert_row(*a, **k)


def restore(conn: Any, *a: Any, **k: Any) -> None:
    return conn.memories.restore(*a, **k)


def unlink(conn: Any, *a: Any, **k: Any) -> None:
    return conn.memories.unlink(*a, **k)


def unabsorb(conn: Any, *a: Any, **k: Any) -> None:
    return conn.memories.unabsorb(*a, **k)
