"""`flows` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.flows import FlowRows


class PgFlowRows(FlowRows):
    pass
