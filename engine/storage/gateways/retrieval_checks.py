"""The `retrieval_checks` table gateway (operator-pinned "memory M in the top k for this query"):
its only writer. Adding and removing are audited by the service (engine/recalls/checks.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.gateways.base import Gateway


class RetrievalCheckRows(Gateway):
    """Operations on `retrieval_checks` rows, inside the caller's transaction."""

    def add(
        self,
        query: str,
        filters: str,
        mode: str,
        memory_id: int,
        k: int,
        now: float,
        actor: str,
        recall_id: Any,
    ) -> int:
        """A new check (due to run); its id."""
        raise NotImplementedError

    def remove(self, check_id: int) -> bool:
        raise NotImplementedError

    def mark_due(self, memory_ids: Sequence[int] | None) -> int:
        """Mark the checks pinning one of `memory_ids` (None: every check) to run again."""
        raise NotImplementedError

    def record_run(self, check_id: int, now: float, ok: bool, rank: int | None, why: str) -> None:
        """The outcome of one run; the check is no longer due."""
        raise NotImplementedError
