"""`retrieval_checks` rows in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.gateways.retrieval_checks import RetrievalCheckRows


class PgRetrievalCheckRows(RetrievalCheckRows):
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
        row = self.conn.execute(
            "INSERT INTO retrieval_checks(query, filters, mode, memory_id, k, created_at, created_by,"
            " recall_id, due) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 1) RETURNING id",
            [query, filters, mode, memory_id, k, now, actor, recall_id],
        ).fetchone()
        return int(row[0])

    def remove(self, check_id: int) -> bool:
        return self.conn.execute("DELETE FROM retrieval_checks WHERE id = %s", [check_id]).rowcount > 0

    def mark_due(self, memory_ids: Sequence[int] | None) -> int:
        if memory_ids is None:
            return int(self.conn.execute("UPDATE retrieval_checks SET due = 1 WHERE due = 0").rowcount)
        ids = [int(m) for m in memory_ids]
        if not ids:
            return 0
        return int(
            self.conn.execute(
                "UPDATE retrieval_checks SET due = 1 WHERE due = 0 AND memory_id = ANY(%s)", [ids]
            ).rowcount
        )

    def record_run(self, check_id: int, now: float, ok: bool, rank: int | None, why: str) -> None:
        self.conn.execute(
            "UPDATE retrieval_checks SET due = 0, last_run_at = %s, last_ok = %s, last_rank = %s,"
            " last_why = %s WHERE id = %s",
            [now, int(ok), rank, why, check_id],
        )
