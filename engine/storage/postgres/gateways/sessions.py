"""`sessions` rows in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.storage.gateways.sessions import SessionRows
from engine.storage.postgres.gateways.columns import ident


class PgSessionRows(SessionRows):
    def _insert(self, values: Mapping[str, Any]) -> None:
        cols = list(values)
        self.conn.execute(
            f"INSERT INTO sessions({', '.join(ident(c) for c in cols)})"
            f" VALUES ({', '.join(['%s'] * len(cols))})",
            [values[c] for c in cols],
        )

    def _update(self, session_id: str, changes: Mapping[str, Any]) -> None:
        cols = list(changes)
        self.conn.execute(
            f"UPDATE sessions SET {', '.join(f'{ident(c)} = %s' for c in cols)} WHERE id = %s",
            [*(changes[c] for c in cols), session_id],
        )

    def exists(self, session_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,)).fetchone() is not None

    def row(self, session_id: str) -> Any:
        return self.conn.execute("SELECT * FROM sessions WHERE id = %s", (session_id,)).fetchone()

    def delete(self, session_ids: list[str]) -> None:
        if not session_ids:
            return
        ids = list(session_ids)
        self.conn.execute(
            "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ANY(%s::text[])", [ids]
        )
        self.conn.execute("DELETE FROM sessions WHERE id = ANY(%s::text[])", [ids])

    def clear_titles(self, session_ids: list[str]) -> None:
        if session_ids:
            self.conn.execute(
                "UPDATE sessions SET title = '' WHERE id = ANY(%s::text[])", [list(session_ids)]
            )
