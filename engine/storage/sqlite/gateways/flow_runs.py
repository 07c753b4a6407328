"""`flow_runs` rows in SQLite's SQL."""

from __future__ import annotations

from typing import Any

from engine.batches import chunked
from engine.storage.gateways.flow_runs import FlowRunRows
from engine.storage.sqlite.gateways.columns import in_list


class SqliteFlowRunRows(FlowRunRows):
    def insert(self, flow_id: int, outcome: str, note: str, agent: str, at: float) -> int:
        got = self.conn.execute(
            "INSERT INTO flow_runs(flow_id, outcome, note, agent, at) VALUES (?,?,?,?,?) RETURNING id",
            (int(flow_id), outcome, note, agent, at),
        ).fetchall()
        return int(got[0][0])

    def of_flow(self, flow_id: int) -> list[Any]:
        sql = "SELECT * FROM flow_runs WHERE flow_id = ? ORDER BY at, id"
        return list(self.conn.execute(sql, (int(flow_id),)).fetchall())

    def _outcomes(self, ids: list[int]) -> list[tuple[int, str, float]]:
        rows: list[tuple[Any, ...]] = []
        for chunk in chunked(ids):
            where, params = in_list("flow_id", chunk)
            rows += self.conn.execute(f"SELECT at, id, flow_id, outcome FROM flow_runs WHERE {where}", params)
        rows.sort(key=lambda r: (r[0], r[1]))  # by at, then id, across chunks
        return [(int(r[2]), r[3], r[0]) for r in rows]

    def _delete(self, ids: list[int]) -> None:
        for chunk in chunked(ids):
            where, params = in_list("id", chunk)
            self.conn.execute(f"DELETE FROM flow_runs WHERE {where}", params)
