"""The `rules` table gateway (scored rules): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class RuleRows(Gateway):
    """Operations on `rules` rows, inside the caller's transaction."""
