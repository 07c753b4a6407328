"""`forget_requests` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.forget_requests import ForgetRequestRows


class PgForgetRequestRows(ForgetRequestRows):
    pass
