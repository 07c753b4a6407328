"""The `flow_runs` table gateway (recorded runs of a procedure): its only writer."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.storage.gateways.base import Gateway


class FlowRunRows(Gateway):
    """Operations on `flow_runs` rows, inside the caller's transaction."""

    def insert(self, flow_id: int, outcome: str, note: str, agent: str, at: float) -> int:
        """Record one run; returns its id."""
        raise NotImplementedError

    def outcomes(self, flow_ids: Iterable[int]) -> list[tuple[int, str, float]]:
        """(flow_id, outcome, at) of every run of these flows, oldest first (by at, then id)."""
        ids = [int(i) for i in flow_ids]
        return self._outcomes(ids) if ids else []

    def of_flow(self, flow_id: int) -> list[Any]:
        """A flow's run rows, oldest first (by at, then id)."""
        raise NotImplementedError

    def delete(self, run_ids: Iterable[int]) -> None:
        """Delete runs by id."""
        ids = [int(i) for i in run_ids]
        if ids:
            self._delete(ids)

    # -- what the adapters implement -----------------------------------------------------------------
    def _outcomes(self, ids: list[int]) -> list[tuple[int, str, float]]:
        raise NotImplementedError

    def _delete(self, ids: list[int]) -> None:
        raise NotImplementedError
