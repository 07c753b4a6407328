"""Import read model in PostgreSQL's SQL (JSON metadata is text: read through a jsonb cast)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.storage.queries.imports import ImportQueries

if TYPE_CHECKING:
    from engine.storage.port import Row


class PgImportQueries(ImportQueries):
    def database_id(self) -> str | None:
        row = self.conn.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()
        if not row or not row[0]:  # no meta table: not one of ours yet
            return None
        got = self.conn.execute("SELECT value FROM meta WHERE key = 'database_id'").fetchone()
        return got[0] if got and got[0] else None

    def memory_exists(self, agent: str, content: str) -> bool:
        return (
            self.conn.execute(
                "SELECT 1 FROM memories WHERE agent = %s AND content = %s LIMIT 1", [agent, content]
            ).fetchone()
            is not None
        )

    def skill_memory(self, agent: str, skill: str) -> Row | None:
        return self.conn.execute(
            "SELECT id, content, tier, pinned, metadata FROM memories WHERE agent = %s AND"
            " kind = 'procedural' AND (metadata::jsonb ->> 'hermes_skill') = %s",
            [agent, skill],
        ).fetchone()

    def flow_named(self, name: str) -> Row | None:
        return self.conn.execute("SELECT * FROM flows WHERE name = %s", [name]).fetchone()

    def session_exists(self, session_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE id = %s", [session_id]).fetchone() is not None

    def session_state(self, session_id: str) -> Row | None:
        return self.conn.execute(
            "SELECT agent, title, ended_at, metadata FROM sessions WHERE id = %s", [session_id]
        ).fetchone()

    def hermes_message_ids(self, session_id: str) -> set[str]:
        return {
            r[0]
            for r in self.conn.execute(
                "SELECT metadata::jsonb ->> 'hermes_id' FROM messages WHERE session_id = %s", [session_id]
            )
            if r[0] is not None
        }

    def audited(self, target_kind: str, target_id: str, actor: str) -> bool:
        return (
            self.conn.execute(
                "SELECT 1 FROM audit WHERE target_kind = %s AND target_id = %s AND actor = %s LIMIT 1",
                [target_kind, target_id, actor],
            ).fetchone()
            is not None
        )
