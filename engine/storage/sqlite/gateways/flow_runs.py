"""`flow_runs` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.flow_runs import FlowRunRows


class SqliteFlowRunRows(FlowRunRows):
    pass
