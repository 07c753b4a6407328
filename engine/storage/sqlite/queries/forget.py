"""Forget read model in SQLite's SQL."""

from __future__ import annotations

from engine.storage.queries.forget import ForgetQueries


class SqliteForgetQueries(ForgetQueries):
    pass
