"""The `forget_requests` table gateway (forget cases): its only writer.

A forget case's row is inserted and moved through its states (open -> previewed -> executed ->
verified) only here, inside the caller's transaction (engine/forget/: the service, the deletion,
the audit re-heading). JSON columns (`selected`, `counts`) arrive as Python values and are stored
as JSON text. A forget's scrub is the one other writer: it redacts a quoted `reason` through the
store's eraser (engine/storage/erasure.py)."""

from __future__ import annotations

import json
from abc import abstractmethod
from typing import Any

from engine.storage.gateways.base import Gateway, checked

# The columns a state change may set (never input: the gateway's own operations name them).
COLUMNS = (
    "status", "selected", "counts", "residue", "executed_at", "verified_at", "scope_value", "reason",
    "workflow",
)  # fmt: skip


class ForgetRequestRows(Gateway):
    """Operations on `forget_requests` rows, inside the caller's transaction."""

    # -- writes ------------------------------------------------------------------------------------
    def insert(
        self,
        scope_kind: str,
        scope_value: str,
        reason: str,
        requested_by: str,
        requested_at: float,
        deadline: float,
    ) -> int:
        """A new case, status 'open'. Returns its id."""
        return int(self._insert(scope_kind, scope_value, reason, requested_by, requested_at, deadline))

    def previewed(self, request_id: int, selected: dict, counts: dict) -> None:
        """The case was previewed: what it selected (ids) and what the cascade reaches (counts)."""
        self._set(
            request_id,
            {"status": "previewed", "selected": json.dumps(selected), "counts": json.dumps(counts)},
        )

    def set_selected(self, request_id: int, selected: dict) -> None:
        self._set(request_id, {"selected": json.dumps(selected)})

    def set_counts(self, request_id: int, counts: dict) -> None:
        self._set(request_id, {"counts": json.dumps(counts)})

    def set_workflow(self, request_id: int, workflow: dict, **changes: Any) -> None:
        """The case's workflow record (match mode, exclusions, withdrawal, approvals, accepted
        residue), with any state change that goes with it (`status`, `scope_value`, `reason`)."""
        enc = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in changes.items()}
        self._set(request_id, {"workflow": json.dumps(workflow), **enc})

    def set_residue(self, request_id: int, residue: int) -> None:
        self._set(request_id, {"residue": residue})

    def executed(
        self,
        request_id: int,
        at: float,
        scope_value: str,
        reason: str,
        selected: dict,
        counts: dict,
    ) -> None:
        """The deletion committed with this: the scope and reason as kept (redacted), the ids removed."""
        self._set(
            request_id,
            {
                "status": "executed",
                "executed_at": at,
                "scope_value": scope_value,
                "reason": reason,
                "selected": json.dumps(selected),
                "counts": json.dumps(counts),
            },
        )

    def verified(
        self, request_id: int, residue: int, status: str, verified_at: float | None, counts: dict
    ) -> None:
        """A verification's outcome: residue found, status ('verified' or still 'executed')."""
        self._set(
            request_id,
            {"residue": residue, "status": status, "verified_at": verified_at, "counts": json.dumps(counts)},
        )

    def _set(self, request_id: int, changes: dict[str, Any]) -> None:
        self._update(request_id, {c: changes[c] for c in checked(changes, COLUMNS, "a forget case column")})

    # -- reads of the table itself -----------------------------------------------------------------
    @abstractmethod
    def get(self, request_id: int) -> Any:
        """The case's whole row (by index and name), None if there is none."""

    @abstractmethod
    def listed(self, status: str | None, limit: int) -> list[Any]:
        """Whole rows, newest first, of one status (None: every status), at most `limit`."""

    @abstractmethod
    def open_case(self, scope_kind: str, scope_value: str) -> int | None:
        """The newest case still 'open' or 'previewed' with exactly this scope, None if none."""

    @abstractmethod
    def executed_count(self) -> int:
        """How many cases have been executed (their `executed_at` set)."""

    @abstractmethod
    def with_audit_head(self, first: int) -> list[tuple[int, str]]:
        """(id, counts JSON text) of the executed or verified cases whose `counts.audit_head` is a
        JSON array whose first element is a number >= `first` (the caller re-checks the shape)."""

    # -- the adapter's SQL -------------------------------------------------------------------------
    @abstractmethod
    def _insert(
        self,
        scope_kind: str,
        scope_value: str,
        reason: str,
        requested_by: str,
        requested_at: float,
        deadline: float,
    ) -> Any: ...

    @abstractmethod
    def _update(self, request_id: int, changes: dict[str, Any]) -> None:
        """SET the (checked) columns of one row."""
