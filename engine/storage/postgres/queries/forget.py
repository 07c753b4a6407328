"""Forget read model in PostgreSQL's SQL."""

from __future__ import annotations

from typing import Any

from engine.storage.postgres.gateways.columns import ident
from engine.storage.queries.forget import ForgetQueries


class PgForgetQueries(ForgetQueries):
    def _column_of(self, table: str, column: str, ids: list[Any]) -> list[tuple[Any, Any]]:
        return [
            (r[0], r[1])
            for r in self.conn.execute(
                f"SELECT id, {ident(column)} FROM {table} WHERE id = ANY(%s)", (ids,)
            ).fetchall()
        ]

    def _flows_of(self, ids: list[int]) -> list[tuple[Any, ...]]:
        return [
            tuple(r)
            for r in self.conn.execute(
                "SELECT id, name, description, triggers, steps FROM flows WHERE id = ANY(%s)", (ids,)
            ).fetchall()
        ]

    def _existing_memories(self, ids: list[int]) -> set[int]:
        return {
            r[0] for r in self.conn.execute("SELECT id FROM memories WHERE id = ANY(%s)", (ids,)).fetchall()
        }

    def session_exists(self, session_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,)).fetchone() is not None

    def _ids_by(self, table: str, column: str, values: list[Any]) -> list[Any]:
        return [
            r[0]
            for r in self.conn.execute(
                f"SELECT id FROM {table} WHERE {ident(column)} = ANY(%s)", (values,)
            ).fetchall()
        ]

    def _text_matches(self, table: str, columns: list[str], patterns: list[str]) -> list[Any]:
        # ILIKE: SQLite's LIKE, which this reproduces, is case-insensitive (ASCII).
        # (a backslash is ILIKE's escape character by default: the patterns' escapes hold)
        cond = " OR ".join(f"{ident(c)} ILIKE ANY(%s)" for c in columns)
        return [
            r[0]
            for r in self.conn.execute(
                f"SELECT id FROM {table} WHERE {cond}", [patterns] * len(columns)
            ).fetchall()
        ]

    def _text_rows(self, table: str, columns: list[str]) -> list[tuple[Any, ...]]:
        cols = ", ".join(ident(c) for c in columns)
        return [tuple(r) for r in self.conn.execute(f"SELECT id, {cols} FROM {table}").fetchall()]

    def absorbed_into(self, memory_id: int) -> int | None:
        r = self.conn.execute("SELECT absorbed_into FROM memories WHERE id = %s", (memory_id,)).fetchone()
        return None if r is None or r[0] is None else int(r[0])

    def sources_of(self, memory_id: int) -> list[int]:
        return [
            int(r[0])
            for r in self.conn.execute(
                "SELECT id FROM memories WHERE absorbed_into = %s", (memory_id,)
            ).fetchall()
        ]

    def _promoted_from(self, ids: list[int]) -> list[int]:
        # Only valid JSON is read, and only a number is compared with the ids.
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT id FROM rules WHERE (CASE WHEN pg_input_is_valid(metadata, 'jsonb')"
                " AND jsonb_typeof(metadata::jsonb -> 'promoted_from') = 'number'"
                " THEN (metadata::jsonb ->> 'promoted_from')::numeric = ANY(%s::numeric[]) ELSE false END)",
                (ids,),
            ).fetchall()
        ]

    def proposal_links(self) -> list[tuple[Any, ...]]:
        return [
            tuple(r)
            for r in self.conn.execute(
                "SELECT id, target_kind, members, result_id, kind FROM proposals"
            ).fetchall()
        ]

    def proposal_texts(self) -> list[tuple[Any, ...]]:
        return [
            tuple(r)
            for r in self.conn.execute(
                "SELECT id, survivor_text, evidence, snapshot FROM proposals"
            ).fetchall()
        ]

    def audit_texts(self) -> list[tuple[int, Any, Any]]:
        return [
            (int(r[0]), r[1], r[2])
            for r in self.conn.execute("SELECT id, reason, summary FROM audit ORDER BY id").fetchall()
        ]

    def audit_hash(self, audit_id: int) -> str | None:
        r = self.conn.execute("SELECT hash FROM audit WHERE id = %s", (audit_id,)).fetchone()
        return None if r is None else r[0]
