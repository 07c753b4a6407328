"""`rules` rows in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.storage.gateways.rules import RuleRows
from engine.storage.postgres.gateways import columns


class PgRuleRows(RuleRows):
    def row(self, rule_id: int) -> Any:
        return self.conn.execute("SELECT * FROM rules WHERE id = %s", (int(rule_id),)).fetchone()

    def ids_of_agent(self, agent: str) -> list[int]:
        got = self.conn.execute("SELECT id FROM rules WHERE agent = %s ORDER BY id", (agent,))
        return [int(r[0]) for r in got]

    def _insert(self, values: Mapping[str, Any]) -> Any:
        return columns.insert(self.conn, "rules", values, values.keys(), "")

    def _update(self, rule_id: int, changes: Mapping[str, Any]) -> None:
        columns.update(self.conn, "rules", rule_id, changes, changes.keys(), "")

    def _decay_many(self, rows: list[tuple[float, str, float, float, int]]) -> None:
        self.conn.executemany(
            "UPDATE rules SET score = %s, status = %s, last_decayed_at = %s, updated_at = %s WHERE id = %s",
            rows,
        )

    def _delete(self, ids: list[int]) -> None:
        self.conn.execute("DELETE FROM rules WHERE id = ANY(%s)", (ids,))
