"""`messages` rows in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.storage.gateways.messages import MessageRows


class PgMessageRows(MessageRows):
    def _held(self, session_id: str) -> list[Any]:
        return self.conn.execute(
            "SELECT role, content, tool_name, at FROM messages WHERE session_id = %s", (session_id,)
        ).fetchall()

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
        got = self.conn.execute(
            "INSERT INTO messages(session_id, role, content, tool_name, at, token_count, metadata)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (session_id, role, content, tool_name, at, token_count, metadata),
        ).fetchall()
        return int(got[0][0])

    def row(self, message_id: int) -> Any:
        return self.conn.execute("SELECT * FROM messages WHERE id = %s", (message_id,)).fetchone()

    def delete(self, message_ids: Iterable[int]) -> None:
        ids = sorted(message_ids)
        if ids:
            self.conn.execute("DELETE FROM messages WHERE id = ANY(%s::bigint[])", [ids])

    def delete_of(self, session_ids: list[str]) -> None:
        if session_ids:
            self.conn.execute("DELETE FROM messages WHERE session_id = ANY(%s::text[])", [list(session_ids)])
