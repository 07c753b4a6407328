"""`recall_log` rows in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.gateways.recall_log import COLUMNS, RecallLogRows

_INSERT = (
    f"INSERT INTO recall_log({', '.join(COLUMNS)}) VALUES ({', '.join(['%s'] * len(COLUMNS))}) RETURNING id"
)


class PgRecallLogRows(RecallLogRows):
    def insert(self, values: Sequence[Any]) -> int:
        # One statement, one round trip: the id comes back with it.
        return int(self.conn.execute(_INSERT, list(values)).fetchone()[0])

    def prune(self, before: float, keep: int) -> int:
        n = self.conn.execute("DELETE FROM recall_log WHERE at < %s", [before]).rowcount
        n += self.conn.execute(
            "DELETE FROM recall_log WHERE id <= (SELECT max(id) FROM recall_log) - %s", [int(keep)]
        ).rowcount
        return int(n)

    def set_hits(self, log_id: int, hits: str, hit_ids: str) -> None:
        self.conn.execute(
            "UPDATE recall_log SET hits = %s, hit_ids = %s WHERE id = %s", [hits, hit_ids, log_id]
        )
