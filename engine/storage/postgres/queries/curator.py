"""Curator read model in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.queries.curator import CuratorQueries


class PgCuratorQueries(CuratorQueries):
    pass
