"""`import_watermarks` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.import_watermarks import ImportWatermarkRows


class PgImportWatermarkRows(ImportWatermarkRows):
    pass
