"""`flows` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.flows import FlowRows


class SqliteFlowRows(FlowRows):
    pass
