"""`retrieval_checks` rows in SQLite's SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.batches import chunked
from engine.storage.gateways.retrieval_checks import RetrievalCheckRows
from engine.storage.sqlite.gateways.columns import marks


class SqliteRetrievalCheckRows(RetrievalCheckRows):
    def add(
        self,
        query: str,
        filters: str,
        mode: str,
        memory_id: int,
        k: int,
        now: float,
        actor: str,
        recall_id: Any,
    ) -> int:
        cur = self.conn.execute(
            "INSERT INTO retrieval_checks(query, filters, mode, memory_id, k, created_at, created_by,"
            " recall_id, due) VALUES (?,?,?,?,?,?,?,?,1)",
            (query, filters, mode, memory_id, k, now, actor, recall_id),
        )
        return int(cur.lastrowid)

    def remove(self, check_id: int) -> bool:
        return self.conn.execute("DELETE FROM retrieval_checks WHERE id = ?", (check_id,)).rowcount > 0

    def mark_due(self, memory_ids: Sequence[int] | None) -> int:
        if memory_ids is None:
            return int(self.conn.execute("UPDATE retrieval_checks SET due = 1 WHERE due = 0").rowcount)
        n = 0
        for part in chunked(list(memory_ids)):
            n += self.conn.execute(
                f"UPDATE retrieval_checks SET due = 1 WHERE due = 0 AND memory_id IN ({marks(len(part))})",
                part,
            ).rowcount
        return n

    def record_run(self, check_id: int, now: float, ok: bool, rank: int | None, why: str) -> None:
        self.conn.execute(
            "UPDATE retrieval_checks SET due = 0, last_run_at = ?, last_ok = ?, last_rank = ?, last_why = ?"
            " WHERE id = ?",
            (now, int(ok), rank, why, check_id),
        )
