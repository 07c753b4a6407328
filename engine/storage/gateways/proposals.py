"""The `proposals` table gateway (the curator's pending merges, promotes, archives): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class ProposalRows(Gateway):
    """Operations on `proposals` rows, inside the caller's transaction."""
