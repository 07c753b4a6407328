"""`proposals` rows in SQLite's SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.batches import chunked
from engine.storage.gateways.proposals import ProposalRows
from engine.storage.sqlite.gateways.columns import marks


class SqliteProposalRows(ProposalRows):
    def insert_pending(
        self,
        kind: str,
        target_kind: str,
        members: str,
        survivor_text: str | None,
        evidence: str,
        fingerprint: str,
        run_id: int,
        created_at: float,
    ) -> int:
        got = self.conn.execute(
            "INSERT INTO proposals(kind, target_kind, status, members, survivor_text, evidence,"
            " fingerprint, run_id, created_at) VALUES (?,?,'pending',?,?,?,?,?,?) RETURNING id",
            (kind, target_kind, members, survivor_text, evidence, fingerprint, run_id, created_at),
        ).fetchall()
        return int(got[0][0])

    def regrow(
        self,
        proposal_id: int,
        members: str,
        survivor_text: str | None,
        evidence: str,
        fingerprint: str,
        run_id: int,
    ) -> None:
        self.conn.execute(
            "UPDATE proposals SET members = ?, survivor_text = ?, evidence = ?,"
            " fingerprint = ?, run_id = ? WHERE id = ? AND status = 'pending'",
            (members, survivor_text, evidence, fingerprint, run_id, proposal_id),
        )

    def approved(self, proposal_id: int, at: float, by: str, reason: str, text: str | None) -> None:
        self.conn.execute(
            "UPDATE proposals SET status = 'approved', decided_at = ?, decided_by = ?, reason = ?,"
            " survivor_text = coalesce(?, survivor_text) WHERE id = ?",
            (at, by, reason, text, proposal_id),
        )

    def applied(self, proposal_id: int, at: float, result_id: Any, snapshot: str) -> None:
        self.conn.execute(
            "UPDATE proposals SET status = 'applied', applied_at = ?, result_id = ?, snapshot = ?"
            " WHERE id = ?",
            (at, result_id, snapshot, proposal_id),
        )

    def rejected(self, proposal_id: int, at: float, by: str, reason: str) -> None:
        self.conn.execute(
            "UPDATE proposals SET status = 'rejected', decided_at = ?, decided_by = ?, reason = ?"
            " WHERE id = ?",
            (at, by, reason, proposal_id),
        )

    def undone(self, proposal_id: int, at: float) -> None:
        self.conn.execute(
            "UPDATE proposals SET status = 'undone', undone_at = ?, snapshot = NULL WHERE id = ?",
            (at, proposal_id),
        )

    def _delete(self, ids: Sequence[int]) -> None:
        for part in chunked(ids):
            self.conn.execute(f"DELETE FROM proposals WHERE id IN ({marks(len(part))})", part)
