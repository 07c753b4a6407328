"""Delegates to the `proposals` gateway (engine/storage/gateways/proposals.py, `conn.proposals`),
kept so callers of the old module work until they call the gateway themselves."""

from __future__ import annotations

from typing import Any


def insert_pending(conn: Any, *a: Any, **k: Any) -> int:
    return conn.proposals.insert_pending(*a, **k)


def regrow(conn: Any, *a: Any, **k: Any) -> None:
    return conn.proposals.regrow(*a, **k)


def approved(conn: Any, *a: Any, **k: Any) -> None:
    return conn.proposals.approved(*a, **k)


def applied(conn: Any, *a: Any, **k: Any) -> None:
    return conn.proposals.applied(*a, **k)


def rejected(conn: Any, *a: Any, **k: Any) -> None:
    return conn.proposals.rejected(*a, **k)


def undone(conn: Any, *a: Any, **k: Any) -> None:
    return conn.proposals.undone(*a, **k)


def delete(conn: Any, *a: Any, **k: Any) -> None:
    return conn.proposals.delete(*a, **k)
