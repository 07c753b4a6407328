"""The `proposals` table gateway (the curator's pending merges, promotes, archives): its only writer.

A curator proposal is inserted, grown and moved through its states (pending -> approved -> applied
-> undone, or rejected) only here, inside the caller's transaction (engine/curator/: the scan's
queueing, the service's decisions), and deleted here by a forget's cascade (engine/forget/select.py:
a proposal quoting forgotten text goes whole). Reads of the queue are the curator read model's
(engine/storage/queries/curator.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from engine.storage.gateways.base import Gateway


class ProposalRows(Gateway):
    """Operations on `proposals` rows, inside the caller's transaction."""

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
        """A new pending proposal (`members`, `evidence`: JSON text). Returns its id."""
        raise NotImplementedError

    def regrow(
        self,
        proposal_id: int,
        members: str,
        survivor_text: str | None,
        evidence: str,
        fingerprint: str,
        run_id: int,
    ) -> None:
        """A pending merge that gained members (a proposal decided meanwhile is left as it is)."""
        raise NotImplementedError

    def approved(self, proposal_id: int, at: float, by: str, reason: str, text: str | None) -> None:
        """Approved by `by`; `text` (None: keep it) replaces the survivor text."""
        raise NotImplementedError

    def applied(self, proposal_id: int, at: float, result_id: Any, snapshot: str) -> None:
        """Applied: what it produced and the snapshot (JSON text) its undo restores."""
        raise NotImplementedError

    def rejected(self, proposal_id: int, at: float, by: str, reason: str) -> None:
        """Rejected by `by`, with the reason."""
        raise NotImplementedError

    def undone(self, proposal_id: int, at: float) -> None:
        """Undone: the snapshot goes (its copies of the rows are no longer needed)."""
        raise NotImplementedError

    def delete(self, proposal_ids: Iterable[int]) -> None:
        """Delete proposals by id (a forget's cascade)."""
        ids = sorted({int(i) for i in proposal_ids})
        if ids:
            self._delete(ids)

    def _delete(self, ids: Sequence[int]) -> None:
        """DELETE the rows with these ids (a non-empty, sorted list)."""
        raise NotImplementedError
