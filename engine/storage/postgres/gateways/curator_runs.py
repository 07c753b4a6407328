"""`curator_runs` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.curator_runs import CuratorRunRows


class PgCuratorRunRows(CuratorRunRows):
    pass
