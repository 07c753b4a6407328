"""The `messages` table gateway (the turns of a session): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class MessageRows(Gateway):
    """Operations on `messages` rows, inside the caller's transaction."""
