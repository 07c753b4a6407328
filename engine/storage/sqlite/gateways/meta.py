"""`meta` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.meta import MetaRows


class SqliteMetaRows(MetaRows):
    pass
