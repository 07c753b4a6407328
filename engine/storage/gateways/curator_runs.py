"""The `curator_runs` table gateway (the curator's scans): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class CuratorRunRows(Gateway):
    """Operations on `curator_runs` rows, inside the caller's transaction."""
