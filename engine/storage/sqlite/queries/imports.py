"""Import read model in SQLite's SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.storage.queries.imports import ImportQueries

if TYPE_CHECKING:
    from engine.storage.port import Row


class SqliteImportQueries(ImportQueries):
    def database_id(self) -> str | None:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'database_id'").fetchone()
        except Exception:  # noqa: BLE001 - no meta table: not one of ours yet
            return None
        return row[0] if row and row[0] else None

    def memory_exists(self, agent: str, content: str) -> bool:
        return (
            self.conn.execute(
                "SELECT 1 FROM memories WHERE agent = ? AND content = ? LIMIT 1", (agent, content)
            ).fetchone()
            is not None
        )

    def skill_memory(self, agent: str, skill: str) -> Row | None:
        return self.conn.execute(
            "SELECT id, content, tier, pinned, metadata FROM memories WHERE agent = ? AND"
            " kind = 'procedural' AND json_extract(metadata, '$.hermes_skill') = ?",
            (agent, skill),
        ).fetchone()

    def flow_named(self, name: str) -> Row | None:
        return self.conn.execute("SELECT * FROM flows WHERE name = ?", (name,)).fetchone()

    def session_exists(self, session_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None

    def session_state(self, session_id: str) -> Row | None:
        return self.conn.execute(
            "SELECT agent, title, ended_at, metadata FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()

    def hermes_message_ids(self, session_id: str) -> set[str]:
        # json_extract returns the id typed (an integer): as text, as PostgreSQL gives it
        return {
            str(r[0])
            for r in self.conn.execute(
                "SELECT json_extract(metadata, '$.hermes_id') FROM messages WHERE session_id = ?",
                (session_id,),
            )
            if r[0] is not None
        }

    def audited(self, target_kind: str, target_id: str, actor: str) -> bool:
        return (
            self.conn.execute(
                "SELECT 1 FROM audit WHERE target_kind = ? AND target_id = ? AND actor = ? LIMIT 1",
                (target_kind, target_id, actor),
            ).fetchone()
            is not None
        )
