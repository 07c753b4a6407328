"""`rule_history` rows in PostgreSQL's SQL."""

from __future__ import annotations

from typing import Any

from engine.storage.gateways.rule_history import COLUMNS, RuleChange, RuleHistoryRows

_INSERT = f"INSERT INTO rule_history({', '.join(COLUMNS)}) VALUES ({', '.join(['%s'] * len(COLUMNS))})"


class PgRuleHistoryRows(RuleHistoryRows):
    def record(self, change: RuleChange) -> int:
        got = self.conn.execute(_INSERT + " RETURNING id", change.values()).fetchall()
        return int(got[0][0])

    def of_rule(self, rule_id: int) -> list[Any]:
        sql = "SELECT * FROM rule_history WHERE rule_id = %s ORDER BY at, id"
        return list(self.conn.execute(sql, (int(rule_id),)).fetchall())

    def _insert_many(self, rows: list[tuple[Any, ...]]) -> None:
        self.conn.executemany(_INSERT, rows)

    def _delete(self, ids: list[int]) -> None:
        self.conn.execute("DELETE FROM rule_history WHERE id = ANY(%s)", (ids,))
