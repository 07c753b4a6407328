"""Forget read model in SQLite's SQL."""

from __future__ import annotations

from typing import Any

from engine.batches import chunked
from engine.storage.queries.forget import ForgetQueries
from engine.storage.sqlite.gateways.columns import marks


class SqliteForgetQueries(ForgetQueries):
    def _column_of(self, table: str, column: str, ids: list[Any]) -> list[tuple[Any, Any]]:
        out: list[tuple[Any, Any]] = []
        for chunk in chunked(ids):
            out += [
                (r[0], r[1])
                for r in self.conn.execute(
                    f"SELECT id, {column} FROM {table} WHERE id IN ({marks(len(chunk))})", chunk
                ).fetchall()
            ]
        return out

    def _flows_of(self, ids: list[int]) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for chunk in chunked(ids):
            out += [
                tuple(r)
                for r in self.conn.execute(
                    "SELECT id, name, description, triggers, steps FROM flows"
                    f" WHERE id IN ({marks(len(chunk))})",
                    chunk,
                ).fetchall()
            ]
        return out

    def _existing_memories(self, ids: list[int]) -> set[int]:
        out: set[int] = set()
        for chunk in chunked(ids):
            out |= {
                r[0]
                for r in self.conn.execute(
                    f"SELECT id FROM memories WHERE id IN ({marks(len(chunk))})", chunk
                )
            }
        return out

    def session_exists(self, session_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None

    def _ids_by(self, table: str, column: str, values: list[Any]) -> list[Any]:
        out: list[Any] = []
        for chunk in chunked(values):
            out += [
                r[0]
                for r in self.conn.execute(
                    f"SELECT id FROM {table} WHERE {column} IN ({marks(len(chunk))})", chunk
                ).fetchall()
            ]
        return out

    def _text_matches(self, table: str, columns: list[str], patterns: list[str]) -> list[Any]:
        cond = " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in columns for _ in patterns)
        params = [p for _ in columns for p in patterns]
        return [r[0] for r in self.conn.execute(f"SELECT id FROM {table} WHERE {cond}", params).fetchall()]

    def _text_rows(self, table: str, columns: list[str]) -> list[tuple[Any, ...]]:
        return [
            tuple(r) for r in self.conn.execute(f"SELECT id, {', '.join(columns)} FROM {table}").fetchall()
        ]

    def _page_owners(self, pages: list[int]) -> dict[int, str]:
        # dbstat is compiled into the sqlean build this engine loads; without it: nothing resolved.
        out: dict[int, str] = {}
        try:
            for i in range(0, len(pages), 500):
                part = pages[i : i + 500]
                qs = ",".join("?" * len(part))
                for name, pageno in self.conn.execute(
                    f"SELECT name, pageno FROM dbstat WHERE pageno IN ({qs})", part
                ).fetchall():
                    out[int(pageno)] = str(name)
        except Exception:  # no dbstat virtual table in this build
            return {}
        return out

    def absorbed_into(self, memory_id: int) -> int | None:
        r = self.conn.execute("SELECT absorbed_into FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return None if r is None or r[0] is None else int(r[0])

    def sources_of(self, memory_id: int) -> list[int]:
        return [
            int(r[0])
            for r in self.conn.execute(
                "SELECT id FROM memories WHERE absorbed_into = ?", (memory_id,)
            ).fetchall()
        ]

    def _promoted_from(self, ids: list[int]) -> list[int]:
        out: list[int] = []
        for chunk in chunked(ids):
            out += [
                r[0]
                for r in self.conn.execute(
                    "SELECT id FROM rules WHERE json_valid(metadata) AND"
                    f" json_extract(metadata, '$.promoted_from') IN ({marks(len(chunk))})",
                    chunk,
                ).fetchall()
            ]
        return out

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
        r = self.conn.execute("SELECT hash FROM audit WHERE id = ?", (audit_id,)).fetchone()
        return None if r is None else r[0]
