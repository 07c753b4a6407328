"""The `meta` table gateway (the engine's key/value settings and stamps): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class MetaRows(Gateway):
    """Operations on `meta` rows, inside the caller's transaction."""
