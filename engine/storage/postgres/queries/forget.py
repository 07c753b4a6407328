"""Forget read model in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.queries.forget import ForgetQueries


class PgForgetQueries(ForgetQueries):
    pass
