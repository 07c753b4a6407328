"""`recall_log` rows in SQLite's SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.gateways.recall_log import COLUMNS, RecallLogRows

_INSERT = f"INSERT INTO recall_log({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"


class SqliteRecallLogRows(RecallLogRows):
    def insert(self, values: Sequence[Any]) -> int:
        return int(self.conn.execute(_INSERT, tuple(values)).lastrowid)

    def prune(self, before: float, keep: int) -> int:
        n = self.conn.execute("DELETE FROM recall_log WHERE at < ?", (before,)).rowcount
        # The newest `keep` ids stay: ids grow with time (AUTOINCREMENT, never reused).
        n += self.conn.execute(
            "DELETE FROM recall_log WHERE id <= (SELECT max(id) FROM recall_log) - ?", (int(keep),)
        ).rowcount
        return int(n)

    def set_hits(self, log_id: int, hits: str, hit_ids: str) -> None:
        self.conn.execute("UPDATE recall_log SET hits = ?, hit_ids = ? WHERE id = ?", (hits, hit_ids, log_id))
