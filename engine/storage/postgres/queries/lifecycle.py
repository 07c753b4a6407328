"""Lifecycle read model in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.queries.lifecycle import LifecycleQueries


class PgLifecycleQueries(LifecycleQueries):
    pass
