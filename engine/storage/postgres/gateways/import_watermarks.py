"""`import_watermarks` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.import_watermarks import ImportWatermarkRows


class PgImportWatermarkRows(ImportWatermarkRows):
    def value(self, source: str) -> str | None:
        row = self.conn.execute("SELECT value FROM import_watermarks WHERE source = %s", [source]).fetchone()
        return None if row is None else row[0]

    def put(self, source: str, value: str, now: float) -> None:
        self.conn.execute(
            "INSERT INTO import_watermarks(source, value, updated_at) VALUES (%s, %s, %s)"
            " ON CONFLICT (source) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            [source, value, now],
        )
