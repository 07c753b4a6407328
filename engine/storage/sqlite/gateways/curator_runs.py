"""`curator_runs` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.curator_runs import CuratorRunRows


class SqliteCuratorRunRows(CuratorRunRows):
    pass
