"""The old `forget_requests` gateway: delegates to the table's gateway on the connection
(`conn.forget_requests`, engine/storage/gateways/forget_requests.py), kept until every caller
calls the gateway itself."""

from __future__ import annotations

from typing import Any


def insert(conn: Any, *a: Any, **k: Any) -> int:
    return conn.forget_requests.insert(*a, **k)


def previewed(conn: Any, *a: Any, **k: Any) -> None:
    conn.forget_requests.previewed(*a, **k)


def set_selected(conn: Any, *a: Any, **k: Any) -> None:
    conn.forget_requests.set_selected(*a, **k)


def set_counts(conn: Any, *a: Any, **k: Any) -> None:
    conn.forget_requests.set_counts(*a, **k)


def set_residue(conn: Any, *a: Any, **k: Any) -> None:
    conn.forget_requests.set_residue(*a, **k)


def executed(conn: Any, *a: Any, **k: Any) -> None:
    conn.forget_requests.executed(*a, **k)


def verified(conn: Any, *a: Any, **k: Any) -> None:
    conn.forget_requests.verified(*a, **k)
