"""The `flows` table gateway (procedures): its only writer. Column names are fixed here, never
input; values are always parameters."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.storage.gateways.base import Gateway, checked

# What an add/replace or a status change may set; `updated_at` is always set with an update.
UPDATABLE = frozenset(
    {"domain", "agent", "triggers", "needs_approval", "steps", "status", "description", "metadata"}
)
INSERTABLE = UPDATABLE | {"name", "created_at", "updated_at"}


class FlowRows(Gateway):
    """Operations on `flows` rows, inside the caller's transaction."""

    def row(self, flow_id: int) -> Any:
        """The whole row (None: no such flow)."""
        raise NotImplementedError

    def named(self, name: str) -> Any:
        """The whole row of the flow called `name` (None: none)."""
        raise NotImplementedError

    def insert(self, values: Mapping[str, Any]) -> int:
        """A new flow built column by column (columns of INSERTABLE). Returns its id."""
        checked(values, INSERTABLE, "an insertable flow column")
        return int(self._insert(values))

    def update(self, flow_id: int, changes: Mapping[str, Any], now: float) -> None:
        """Set `changes` (columns of UPDATABLE) and updated_at."""
        checked(changes, UPDATABLE, "an updatable flow column")
        self._update(flow_id, {**changes, "updated_at": now})

    def delete(self, flow_ids: Iterable[int]) -> None:
        """Delete flows by id (a forget's cascade; their runs cascade)."""
        ids = [int(i) for i in flow_ids]
        if ids:
            self._delete(ids)

    def ids_of_agent(self, agent: str) -> list[int]:
        """The ids of `agent`'s flows (a forget of an agent), ascending."""
        raise NotImplementedError

    # -- what the adapters implement -----------------------------------------------------------------
    def _insert(self, values: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def _update(self, flow_id: int, changes: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def _delete(self, ids: list[int]) -> None:
        raise NotImplementedError
