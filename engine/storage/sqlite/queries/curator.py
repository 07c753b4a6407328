"""Curator read model in SQLite's SQL."""

from __future__ import annotations

from engine.storage.queries.curator import CuratorQueries


class SqliteCuratorQueries(CuratorQueries):
    pass
