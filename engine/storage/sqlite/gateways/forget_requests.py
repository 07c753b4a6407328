"""`forget_requests` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.forget_requests import ForgetRequestRows


class SqliteForgetRequestRows(ForgetRequestRows):
    pass
