"""`messages` rows in SQLite's SQL."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.batches import chunked
from engine.storage.gateways.messages import MessageRows
from engine.storage.sqlite.gateways.columns import marks


class SqliteMessageRows(MessageRows):
    def _held(self, session_id: str) -> list[Any]:
        return self.conn.execute(
            "SELECT role, content, tool_name, at FROM messages WHERE session_id = ?", (session_id,)
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
            " VALUES (?,?,?,?,?,?,?) RETURNING id",
            (session_id, role, content, tool_name, at, token_count, metadata),
        ).fetchall()
        return int(got[0][0])

    def row(self, message_id: int) -> Any:
        return self.conn.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()

    def delete(self, message_ids: Iterable[int]) -> None:
        for chunk in chunked(sorted(message_ids)):
            self.conn.execute(f"DELETE FROM messages WHERE id IN ({marks(len(chunk))})", chunk)

    def delete_of(self, session_ids: list[str]) -> None:
        for chunk in chunked(session_ids):
            self.conn.execute(f"DELETE FROM messages WHERE session_id IN ({marks(len(chunk))})", chunk)
