"""Lifecycle read model in SQLite's SQL."""

from __future__ import annotations

from engine.storage.queries.lifecycle import LifecycleQueries


class SqliteLifecycleQueries(LifecycleQueries):
    pass
