"""`flows` rows in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.storage.gateways.flows import FlowRows
from engine.storage.postgres.gateways import columns


class PgFlowRows(FlowRows):
    def row(self, flow_id: int) -> Any:
        return self.conn.execute("SELECT * FROM flows WHERE id = %s", (int(flow_id),)).fetchone()

    def named(self, name: str) -> Any:
        return self.conn.execute("SELECT * FROM flows WHERE name = %s", (name,)).fetchone()

    def ids_of_agent(self, agent: str) -> list[int]:
        got = self.conn.execute("SELECT id FROM flows WHERE agent = %s ORDER BY id", (agent,))
        return [int(r[0]) for r in got]

    def _insert(self, values: Mapping[str, Any]) -> Any:
        return columns.insert(self.conn, "flows", values, values.keys(), "")

    def _update(self, flow_id: int, changes: Mapping[str, Any]) -> None:
        columns.update(self.conn, "flows", flow_id, changes, changes.keys(), "")

    def _delete(self, ids: list[int]) -> None:
        self.conn.execute("DELETE FROM flows WHERE id = ANY(%s)", (ids,))
