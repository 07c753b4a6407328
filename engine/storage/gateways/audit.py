"""The `audit` table gateway (the hash-chained trail of every mutation): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class AuditRows(Gateway):
    """Operations on `audit` rows, inside the caller's transaction."""
