"""`curator_runs` rows in PostgreSQL's SQL."""

from __future__ import annotations

from engine.storage.gateways.curator_runs import CuratorRunRows


class PgCuratorRunRows(CuratorRunRows):
    def insert(
        self, started_at: float, finished_at: float, counts: str, report_dir: str | None, watermark: int
    ) -> int:
        got = self.conn.execute(
            "INSERT INTO curator_runs(started_at, finished_at, dry_run, counts, report_dir, watermark)"
            " VALUES (%s, %s, 0, %s, %s, %s) RETURNING id",
            (started_at, finished_at, counts, report_dir, watermark),
        ).fetchall()
        return int(got[0][0])
