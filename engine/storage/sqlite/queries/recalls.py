"""The recalls read model in SQLite's SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.batches import chunked
from engine.storage.queries.recalls import RecallQueries, like_pattern
from engine.storage.sqlite.gateways.columns import marks


class SqliteRecallQueries(RecallQueries):
    def recalls(self, agent: str | None, since: float | None, text: str | None, limit: int) -> list[Any]:
        params: list[Any] = []
        cond = ["1"]
        if agent:
            cond.append("(agent = ? OR actor = ?)")
            params += [agent, agent]
        if since is not None:
            cond.append("at >= ?")
            params.append(since)
        if text:
            cond.append("query LIKE ? ESCAPE '\\'")  # ASCII case-insensitive, as LIKE is here
            params.append(like_pattern(text))
        sql = f"SELECT * FROM recall_log WHERE {' AND '.join(cond)} ORDER BY id DESC LIMIT ?"
        return self.conn.execute(sql, (*params, int(limit))).fetchall()

    def recall(self, log_id: int) -> Any:
        return self.conn.execute("SELECT * FROM recall_log WHERE id = ?", (log_id,)).fetchone()

    def with_hits(self, memory_ids: Sequence[int]) -> list[tuple[int, str]]:
        out: dict[int, str] = {}
        for part in chunked(list(memory_ids), 200):
            cond = " OR ".join(["hit_ids LIKE ?"] * len(part))
            for r in self.conn.execute(
                f"SELECT id, hits FROM recall_log WHERE {cond}", [f"% {int(m)} %" for m in part]
            ):
                out[int(r[0])] = r[1]
        return sorted(out.items())

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
        return self.conn.execute("SELECT * FROM retrieval_checks WHERE id = ?", (check_id,)).fetchone()

    def fates(self, memory_ids: Sequence[int]) -> list[Any]:
        out: list[Any] = []
        for part in chunked(list(memory_ids)):
            out += self.conn.execute(
                "SELECT id, tier, absorbed_into, created_at, updated_at FROM memories"
                f" WHERE id IN ({marks(len(part))})",
                part,
            ).fetchall()
        return out

    def forgotten_by(self, memory_ids: Sequence[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for part in chunked([str(m) for m in memory_ids]):
            for tid, req in self.conn.execute(
                "SELECT target_id, request_id FROM tombstones WHERE target_kind = 'memory'"
                f" AND target_id IN ({marks(len(part))}) AND request_id IS NOT NULL",
                part,
            ):
                out[int(tid)] = int(req)
        return out

    def merged_by(self, result_ids: Sequence[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for part in chunked(list(result_ids)):
            for rid, pid in self.conn.execute(
                "SELECT result_id, id FROM proposals WHERE kind = 'merge' AND status = 'applied'"
                f" AND result_id IN ({marks(len(part))})",
                part,
            ):
                out[int(rid)] = int(pid)
        return out

    def audit_since(self, memory_ids: Sequence[int], at: float) -> list[tuple[int, str, str]]:
        out: list[tuple[int, str, str]] = []
        for part in chunked([str(m) for m in memory_ids]):
            out += [
                (int(r[0]), r[1], r[2])
                for r in self.conn.execute(
                    "SELECT target_id, action, actor FROM audit WHERE target_kind = 'memory'"
                    f" AND target_id IN ({marks(len(part))}) AND at > ? ORDER BY id",
                    (*part, at),
                )
            ]
        return out

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM recall_log").fetchone()[0])
