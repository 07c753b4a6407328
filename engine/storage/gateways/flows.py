"""The `flows` table gateway (procedures): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class FlowRows(Gateway):
    """Operations on `flows` rows, inside the caller's transaction."""
