"""The `sessions` table gateway (an agent's conversations): its only writer. Sessions are inserted
(the sessions service), updated (an importer bringing a session's newer title, end and
provenance), and deleted or blanked by a forget's cascade (engine/forget/select.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.storage.gateways.base import Gateway, checked

INSERTABLE = frozenset(
    {
        "id", "agent", "user", "source", "model", "title", "started_at", "ended_at",
        "parent_session_id", "metadata",
    }
)  # fmt: skip
UPDATABLE = frozenset({"title", "ended_at", "metadata", "parent_session_id"})


class SessionRows(Gateway):
    """Operations on `sessions` rows, inside the caller's transaction."""

    def _insert(self, values: Mapping[str, Any]) -> None:
        """INSERT one row of checked columns."""
        raise NotImplementedError

    def _update(self, session_id: str, changes: Mapping[str, Any]) -> None:
        """UPDATE one row: set checked columns (at least one)."""
        raise NotImplementedError

    def insert(self, values: Mapping[str, Any]) -> None:
        """A new session row (columns of INSERTABLE; its id is the caller's)."""
        checked(values, INSERTABLE, "an insertable session column")
        self._insert(values)

    def update(self, session_id: str, changes: Mapping[str, Any]) -> None:
        """Set `changes` (columns of UPDATABLE)."""
        checked(changes, UPDATABLE, "an updatable session column")
        if changes:
            self._update(session_id, changes)

    def exists(self, session_id: str) -> bool:
        """Whether a session with this id is recorded."""
        raise NotImplementedError

    def row(self, session_id: str) -> Any:
        """The whole row (None: no such session)."""
        raise NotImplementedError

    def delete(self, session_ids: list[str]) -> None:
        """Delete sessions (a forget's cascade): the sessions naming one as parent let go first."""
        raise NotImplementedError

    def clear_titles(self, session_ids: list[str]) -> None:
        """Blank the titles of sessions that stay (a forget whose text a title quoted)."""
        raise NotImplementedError
