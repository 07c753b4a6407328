"""Shim: the `sessions` gateway is `conn.sessions` and the `messages` one `conn.messages`
(engine/storage/gateways/); these delegates keep older callers working until they call the
gateways directly."""

from __future__ import annotations

from typing import Any

from engine.storage.gateways.sessions import INSERTABLE, UPDATABLE

__all__ = ["INSERTABLE", "UPDATABLE"]


def insert(conn: Any, *a: Any, **k: Any) -> None:
    return conn.sessions.insert(*a, **k)


def update(conn: Any, *a: Any, **k: Any) -> None:
    return conn.sessions.update(*a, **k)


def delete(conn: Any, *a: Any, **k: Any) -> None:
    return conn.sessions.delete(*a, **k)


def clear_titles(conn: Any, *a: Any, **k: Any) -> None:
    return conn.sessions.clear_titles(*a, **k)


def held_messages(conn: Any, *a: Any, **k: Any) -> list[tuple[str, str, str, float | None]]:
    return conn.messages.held(*a, **k)


def insert_message(conn: Any, *a: Any, **k: Any) -> int:
    return conn.messages.insert(*a, **k)


def delete_messages(conn: Any, *a: Any, **k: Any) -> None:
    return conn.messages.delete(*a, **k)


def delete_messages_of(conn: Any, *a: Any, **k: Any) -> None:
    return conn.messages.delete_of(*a, **k)
