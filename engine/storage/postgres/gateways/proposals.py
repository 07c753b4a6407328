"""`proposals` rows in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.gateways.proposals import ProposalRows


class PgProposalRows(ProposalRows):
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
            " fingerprint, run_id, created_at) VALUES (%s, %s, 'pending', %s, %s, %s, %s, %s, %s)"
            " RETURNING id",
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
            "UPDATE proposals SET members = %s, survivor_text = %s, evidence = %s,"
            " fingerprint = %s, run_id = %s WHERE id = %s AND status = 'pending'",
            (members, survivor_text, evidence, fingerprint, run_id, proposal_id),
        )

    def approved(self, proposal_id: int, at: float, by: str, reason: str, text: str | None) -> None:
        self.conn.execute(
            "UPDATE proposals SET status = 'approved', decided_at = %s, decided_by = %s, reason = %s,"
            " survivor_text = coalesce(%s::text, survivor_text) WHERE id = %s",
            (at, by, reason, text, proposal_id),
        )

    def applied(self, proposal_id: int, at: float, result_id: Any, snapshot: str) -> None:
        self.conn.execute(
            "UPDATE proposals SET status = 'applied', applied_at = %s, result_id = %s, snapshot = %s"
            " WHERE id = %s",
            (at, result_id, snapshot, proposal_id),
        )

    def rejected(self, proposal_id: int, at: float, by: str, reason: str) -> None:
        self.conn.execute(
            "UPDATE proposals SET status = 'rejected', decided_at = %s, decided_by = %s, reason = %s"
            " WHERE id = %s",
            (at, by, reason, proposal_id),
        )

    def undone(self, proposal_id: int, at: float) -> None:
        self.conn.execute(
            "UPDATE proposals SET status = 'undone', undone_at = %s, snapshot = NULL WHERE id = %s",
            (at, proposal_id),
        )

    def _delete(self, ids: Sequence[int]) -> None:
        self.conn.execute("DELETE FROM proposals WHERE id = ANY(%s)", (list(ids),))
