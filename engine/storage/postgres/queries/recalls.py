"""The recalls read model in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.queries.recalls import RecallQueries, like_pattern


class PgRecallQueries(RecallQueries):
    def recalls(self, agent: str | None, since: float | None, text: str | None, limit: int) -> list[Any]:
        params: list[Any] = []
        cond = ["TRUE"]
        if agent:
            cond.append("(agent = %s OR actor = %s)")
            params += [agent, agent]
        if since is not None:
            cond.append("at >= %s")
            params.append(since)
        if text:
            cond.append("query ILIKE %s")  # LIKE's default escape is the backslash
            params.append(like_pattern(text))
        sql = f"SELECT * FROM recall_log WHERE {' AND '.join(cond)} ORDER BY id DESC LIMIT %s"
        return self.conn.execute(sql, [*params, int(limit)]).fetchall()

    def recall(self, log_id: int) -> Any:
        return self.conn.execute("SELECT * FROM recall_log WHERE id = %s", [log_id]).fetchone()

    def with_hits(self, memory_ids: Sequence[int]) -> list[tuple[int, str]]:
        pats = [f"% {int(m)} %" for m in memory_ids]
        if not pats:
            return []
        rows = self.conn.execute(
            "SELECT id, hits FROM recall_log WHERE hit_ids LIKE ANY(%s) ORDER BY id", [pats]
        ).fetchall()
        return [(int(r[0]), r[1]) for r in rows]

    def checks(self, due_only: bool = False) -> list[Any]:
        where = " WHERE due = 1" if due_only else ""
        return self.conn.execute(f"SELECT * FROM retrieval_checks{where} ORDER BY id").fetchall()

    def check_counts(self) -> tuple[int, int]:
        row = self.conn.execute(
            "SELECT coalesce(sum(CASE WHEN due = 1 THEN 1 ELSE 0 END), 0),"
            " coalesce(sum(CASE WHEN last_ok = 0 THEN 1 ELSE 0 END), 0) FROM retrieval_checks"
        ).fetchone()
        return int(row[0]), int(row[1])

    def check(self, check_id: int) -> Any:
        return self.conn.execute("SELECT * FROM retrieval_checks WHERE id = %s", [check_id]).fetchone()

    def fates(self, memory_ids: Sequence[int]) -> list[Any]:
        ids = [int(m) for m in memory_ids]
        if not ids:
            return []
        return self.conn.execute(
            "SELECT id, tier, absorbed_into, created_at, updated_at FROM memories WHERE id = ANY(%s)", [ids]
        ).fetchall()

    def forgotten_by(self, memory_ids: Sequence[int]) -> dict[int, int]:
        ids = [str(m) for m in memory_ids]
        if not ids:
            return {}
        rows = self.conn.execute(
            "SELECT target_id, request_id FROM tombstones WHERE target_kind = 'memory'"
            " AND target_id = ANY(%s) AND request_id IS NOT NULL",
            [ids],
        ).fetchall()
        return {int(r[0]): int(r[1]) for r in rows}

    def merged_by(self, result_ids: Sequence[int]) -> dict[int, int]:
        ids = [int(m) for m in result_ids]
        if not ids:
            return {}
        rows = self.conn.execute(
            "SELECT result_id, id FROM proposals WHERE kind = 'merge' AND status = 'applied'"
            " AND result_id = ANY(%s)",
            [ids],
        ).fetchall()
        return {int(r[0]): int(r[1]) for r in rows}

    def audit_since(self, memory_ids: Sequence[int], at: float) -> list[tuple[int, str, str]]:
        ids = [str(m) for m in memory_ids]
        if not ids:
            return []
        rows = self.conn.execute(
            "SELECT target_id, action, actor FROM audit WHERE target_kind = 'memory'"
            " AND target_id = ANY(%s) AND at > %s ORDER BY id",
            [ids, at],
        ).fetchall()
        return [(int(r[0]), r[1], r[2]) for r in rows]

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM recall_log").fetchone()[0])
