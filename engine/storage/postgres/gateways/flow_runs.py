"""`flow_runs` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.flow_runs import FlowRunRows


class PgFlowRunRows(FlowRunRows):
    pass
