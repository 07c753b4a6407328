"""`import_watermarks` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.import_watermarks import ImportWatermarkRows


class SqliteImportWatermarkRows(ImportWatermarkRows):
    pass
