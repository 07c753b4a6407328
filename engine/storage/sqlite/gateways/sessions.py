"""`sessions` rows in SQLite's SQL."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.batches import chunked
from engine.storage.gateways.sessions import SessionRows
from engine.storage.sqlite.gateways.columns import marks


class SqliteSessionRows(SessionRows):
    def _insert(self, values: Mapping[str, Any]) -> None:
        cols = list(values)
        self.conn.execute(
            f"INSERT INTO sessions({', '.join(cols)}) VALUES ({marks(len(cols))})", [values[c] for c in cols]
        )

    def _update(self, session_id: str, changes: Mapping[str, Any]) -> None:
        cols = list(changes)
        self.conn.execute(
            f"UPDATE sessions SET {', '.join(f'{c} = ?' for c in cols)} WHERE id = ?",
            [*(changes[c] for c in cols), session_id],
        )

    def exists(self, session_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None

    def row(self, session_id: str) -> Any:
        return self.conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()

    def delete(self, session_ids: list[str]) -> None:
        if not session_ids:
            return
        for chunk in chunked(session_ids):
            self.conn.execute(
                "UPDATE sessions SET parent_session_id = NULL"
                f" WHERE parent_session_id IN ({marks(len(chunk))})",
                chunk,
            )
        for chunk in chunked(session_ids):
            self.conn.execute(f"DELETE FROM sessions WHERE id IN ({marks(len(chunk))})", chunk)

    def clear_titles(self, session_ids: list[str]) -> None:
        for chunk in chunked(session_ids):
            self.conn.execute(f"UPDATE sessions SET title = '' WHERE id IN ({marks(len(chunk))})", chunk)
