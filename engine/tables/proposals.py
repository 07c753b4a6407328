"""The `proposals` table gateway: a curator proposal is inserted, grown and moved through its
states (pending -> approved -> applied -> undone, or rejected) only here, inside the caller's
transaction (engine/curator/: the scan's queueing, the service's decisions), and deleted here by a
forget's cascade (engine/forget/select.py: a proposal quoting forgotten text goes whole)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.sql import chunked, marks


def insert_pending(
    conn: Any,
    kind: str,
    target_kind: str,
    members: str,
    survivor_text: str | None,
    evidence: str,
    fingerprint: str,
    run_id: int,
    created_at: float,
) -> int:
    """A new pending proposal (`members`, `evidence`: JSON text). Returns its id."""
    got = conn.execute(
        "INSERT INTO proposals(kind, target_kind, status, members, survivor_text, evidence,"
        " fingerprint, run_id, created_at) VALUES (?,?,'pending',?,?,?,?,?,?) RETURNING id",
        (kind, target_kind, members, survivor_text, evidence, fingerprint, run_id, created_at),
    ).fetchall()
    return int(got[0][0])


def regrow(
    conn: Any,
    proposal_id: int,
    members: str,
    survivor_text: str | None,
    evidence: str,
    fingerprint: str,
    run_id: int,
) -> None:
    """A pending merge that gained members (a proposal decided meanwhile is left as it is)."""
    conn.execute(
        "UPDATE proposals SET members = ?, survivor_text = ?, evidence = ?,"
        " fingerprint = ?, run_id = ? WHERE id = ? AND status = 'pending'",
        (members, survivor_text, evidence, fingerprint, run_id, proposal_id),
    )


def approved(conn: Any, proposal_id: int, at: float, by: str, reason: str, text: str | None) -> None:
    """Approved by `by`; `text` (None: keep it) replaces the survivor text."""
    conn.execute(
        "UPDATE proposals SET status = 'approved', decided_at = ?, decided_by = ?, reason = ?,"
        " survivor_text = coalesce(?, survivor_text) WHERE id = ?",
        (at, by, reason, text, proposal_id),
    )


def applied(conn: Any, proposal_id: int, at: float, result_id: Any, snapshot: str) -> None:
    """Applied: what it produced and the snapshot (JSON text) its undo restores."""
    conn.execute(
        "UPDATE proposals SET status = 'applied', applied_at = ?, result_id = ?, snapshot = ? WHERE id = ?",
        (at, result_id, snapshot, proposal_id),
    )


def rejected(conn: Any, proposal_id: int, at: float, by: str, reason: str) -> None:
    conn.execute(
        "UPDATE proposals SET status = 'rejected', decided_at = ?, decided_by = ?, reason = ? WHERE id = ?",
        (at, by, reason, proposal_id),
    )


def undone(conn: Any, proposal_id: int, at: float) -> None:
    """Undone: the snapshot goes (its copies of the rows are no longer needed)."""
    conn.execute(
        "UPDATE proposals SET status = 'undone', undone_at = ?, snapshot = NULL WHERE id = ?",
        (at, proposal_id),
    )


def delete(conn: Any, proposal_ids: Iterable[int]) -> None:
    """Delete proposals by id (a forget's cascade)."""
    for chunk in chunked(sorted(proposal_ids)):
        conn.execute(f"DELETE FROM proposals WHERE id IN ({marks(len(chunk))})", chunk)
