"""`flow_runs` rows in PostgreSQL's SQL."""

from __future__ import annotations

from typing import Any

from engine.storage.gateways.flow_runs import FlowRunRows


class PgFlowRunRows(FlowRunRows):
    def insert(self, flow_id: int, outcome: str, note: str, agent: str, at: float) -> int:
        got = self.conn.execute(
            "INSERT INTO flow_runs(flow_id, outcome, note, agent, at)"
            " VALUES (%s, %s, %s, %s, %s) RETURNING id",
            (int(flow_id), outcome, note, agent, at),
        ).fetchall()
        return int(got[0][0])

    def of_flow(self, flow_id: int) -> list[Any]:
        sql = "SELECT * FROM flow_runs WHERE flow_id = %s ORDER BY at, id"
        return list(self.conn.execute(sql, (int(flow_id),)).fetchall())

    def _outcomes(self, ids: list[int]) -> list[tuple[int, str, float]]:
        got = self.conn.execute(
            "SELECT flow_id, outcome, at FROM flow_runs WHERE flow_id = ANY(%s) ORDER BY at, id", (ids,)
        )
        return [(int(r[0]), r[1], r[2]) for r in got]

    def _delete(self, ids: list[int]) -> None:
        self.conn.execute("DELETE FROM flow_runs WHERE id = ANY(%s)", (ids,))
