"""`meta` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.meta import MetaRows


class PgMetaRows(MetaRows):
    pass
