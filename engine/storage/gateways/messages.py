"""The `messages` table gateway (the turns of a session): its only writer. Messages are appended
(the sessions service) and deleted by a forget's cascade (engine/forget/select.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.storage.gateways.base import Gateway


class MessageRows(Gateway):
    """Operations on `messages` rows, inside the caller's transaction."""

    def held(self, session_id: str) -> list[tuple[str, str, str, float | None]]:
        """(role, content, tool name or "", at) of every message the session holds."""
        return [(str(r[0]), str(r[1] or ""), str(r[2] or ""), r[3]) for r in self._held(session_id)]

    def _held(self, session_id: str) -> list[Any]:
        """(role, content, tool_name, at) rows of the session's messages."""
        raise NotImplementedError

    def insert(
        self,
        session_id: str,
        role: str,
        content: str,
        tool_name: str | None,
        at: float,
        token_count: int,
        metadata: str,
    ) -> int:
        """Append a message to a session (`metadata`: JSON text). Returns its id."""
        raise NotImplementedError

    def row(self, message_id: int) -> Any:
        """The whole row (None: no such message)."""
        raise NotImplementedError

    def delete(self, message_ids: Iterable[int]) -> None:
        """Delete messages by id (a forget's cascade)."""
        raise NotImplementedError

    def delete_of(self, session_ids: list[str]) -> None:
        """Delete every message of these sessions (a forget's cascade, before the sessions go)."""
        raise NotImplementedError
