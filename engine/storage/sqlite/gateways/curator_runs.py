"""`curator_runs` rows in SQLite's SQL."""

from __future__ import annotations

from engine.storage.gateways.curator_runs import CuratorRunRows


class SqliteCuratorRunRows(CuratorRunRows):
    def insert(
        self, started_at: float, finished_at: float, counts: str, report_dir: str | None, watermark: int
    ) -> int:
        got = self.conn.execute(
            "INSERT INTO curator_runs(started_at, finished_at, dry_run, counts, report_dir, watermark)"
            " VALUES (?,?,0,?,?,?) RETURNING id",
            (started_at, finished_at, counts, report_dir, watermark),
        ).fetchall()
        return int(got[0][0])
