"""The `forget_requests` table gateway: a forget case's row is inserted and moved through its
states (open -> previewed -> executed -> verified) only here, inside the caller's transaction
(engine/forget/: the service, the deletion, the audit re-heading). JSON columns (`selected`,
`counts`) arrive as Python values and are stored as JSON text. A forget's scrub is the one
exception: it redacts a quoted `reason` in any table (engine/forget/scrub.py)."""

from __future__ import annotations

import json
from typing import Any


def insert(
    conn: Any,
    scope_kind: str,
    scope_value: str,
    reason: str,
    requested_by: str,
    requested_at: float,
    deadline: float,
) -> int:
    """A new case, status 'open'. Returns its id."""
    got = conn.execute(
        "INSERT INTO forget_requests(scope_kind, scope_value, reason, requested_by, requested_at,"
        " deadline, status) VALUES (?,?,?,?,?,?,'open') RETURNING id",
        (scope_kind, scope_value, reason, requested_by, requested_at, deadline),
    ).fetchall()
    return int(got[0][0])


def previewed(conn: Any, request_id: int, selected: dict, counts: dict) -> None:
    """The case was previewed: what it selected (ids) and what the cascade reaches (counts)."""
    conn.execute(
        "UPDATE forget_requests SET status = 'previewed', selected = ?, counts = ? WHERE id = ?",
        (json.dumps(selected), json.dumps(counts), request_id),
    )


def set_selected(conn: Any, request_id: int, selected: dict) -> None:
    conn.execute("UPDATE forget_requests SET selected = ? WHERE id = ?", (json.dumps(selected), request_id))


def set_counts(conn: Any, request_id: int, counts: dict) -> None:
    conn.execute("UPDATE forget_requests SET counts = ? WHERE id = ?", (json.dumps(counts), request_id))


def set_residue(conn: Any, request_id: int, residue: int) -> None:
    conn.execute("UPDATE forget_requests SET residue = ? WHERE id = ?", (residue, request_id))


def executed(
    conn: Any,
    request_id: int,
    at: float,
    scope_value: str,
    reason: str,
    selected: dict,
    counts: dict,
) -> None:
    """The deletion committed with this: the scope and reason as kept (redacted), the ids removed."""
    conn.execute(
        "UPDATE forget_requests SET status = 'executed', executed_at = ?, scope_value = ?,"
        " reason = ?, selected = ?, counts = ? WHERE id = ?",
        (at, scope_value, reason, json.dumps(selected), json.dumps(counts), request_id),
    )


def verified(
    conn: Any, request_id: int, residue: int, status: str, verified_at: float | None, counts: dict
) -> None:
    """A verification's outcome: residue found, status ('verified' or still 'executed')."""
    conn.execute(
        "UPDATE forget_requests SET residue = ?, status = ?, verified_at = ?, counts = ? WHERE id = ?",
        (residue, status, verified_at, json.dumps(counts), request_id),
    )
