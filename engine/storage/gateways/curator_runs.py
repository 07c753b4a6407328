"""The `curator_runs` table gateway (the curator's scans): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class CuratorRunRows(Gateway):
    """Operations on `curator_runs` rows, inside the caller's transaction."""

    def insert(
        self, started_at: float, finished_at: float, counts: str, report_dir: str | None, watermark: int
    ) -> int:
        """A finished real run (a dry run is this write rolled back): `counts` is JSON text (the
        counts and timings), `watermark` the highest memory id the scan saw. Returns its id."""
        raise NotImplementedError
