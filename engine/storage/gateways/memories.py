"""The `memories` table gateway (what agents remember): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class MemoryRows(Gateway):
    """Operations on `memories` rows, inside the caller's transaction."""
