"""The `rules` table gateway (scored rules): its only writer. Every INSERT, UPDATE and DELETE of a
rule row goes through here, inside the caller's transaction (the rules service, the decay pass,
the curator's apply and undo, a forget's cascade). Column names are fixed here, never input."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.storage.gateways.base import Gateway, checked

# What a rule change (operator, decay, curator) may set; `updated_at` is always set with it.
UPDATABLE = frozenset(
    {
        "text", "domain", "agent", "source", "score", "status", "violations", "last_reinforced_at",
        "last_decayed_at", "pinned", "absorbed_into", "metadata",
    }
)  # fmt: skip
INSERTABLE = UPDATABLE | {"created_at", "updated_at"}


class RuleRows(Gateway):
    """Operations on `rules` rows, inside the caller's transaction."""

    def row(self, rule_id: int) -> Any:
        """The whole row (None: no such rule)."""
        raise NotImplementedError

    def insert(self, values: Mapping[str, Any]) -> int:
        """A new rule built column by column (columns of INSERTABLE). Returns its id."""
        checked(values, INSERTABLE, "an insertable rule column")
        return int(self._insert(values))

    def update(self, rule_id: int, changes: Mapping[str, Any], now: float) -> None:
        """Set `changes` (columns of UPDATABLE) and updated_at."""
        checked(changes, UPDATABLE, "an updatable rule column")
        self._update(rule_id, {**changes, "updated_at": now})

    def decay_many(self, rows: Iterable[tuple[float, str, float, int]], now: float) -> None:
        """A decay pass's batch: (score, status, decayed_to, id) per rule, in one statement."""
        self._decay_many([(score, status, decayed_to, now, rid) for score, status, decayed_to, rid in rows])

    def restore(self, row: Mapping[str, Any], real: Iterable[str]) -> None:
        """Write a row back exactly as recorded, every column including updated_at (a curator undo).
        `real`: the table's real columns; a recorded name outside them is refused."""
        changes = {c: row[c] for c in row if c != "id"}
        checked(changes, real, "a rule column")
        self._update(row["id"], changes)

    def delete(self, rule_ids: Sequence[int]) -> None:
        """Delete rules by id (a curator undo removes the rule its apply created, a forget's cascade
        the rules promoted from forgotten memories; history cascades)."""
        ids = [int(i) for i in rule_ids]
        if ids:
            self._delete(ids)

    def ids_of_agent(self, agent: str) -> list[int]:
        """The ids of `agent`'s rules (a forget of an agent), ascending."""
        raise NotImplementedError

    # -- what the adapters implement (checked column names, values as parameters) -------------------
    def _insert(self, values: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def _update(self, rule_id: int, changes: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def _decay_many(self, rows: list[tuple[float, str, float, float, int]]) -> None:
        """(score, status, last_decayed_at, updated_at, id) per rule."""
        raise NotImplementedError

    def _delete(self, ids: list[int]) -> None:
        raise NotImplementedError
