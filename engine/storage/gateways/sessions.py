"""The `sessions` table gateway (an agent's conversations): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class SessionRows(Gateway):
    """Operations on `sessions` rows, inside the caller's transaction."""
