"""The `tombstones` table gateway (keyed prints of forgotten text): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class TombstoneRows(Gateway):
    """Operations on `tombstones` rows, inside the caller's transaction."""
