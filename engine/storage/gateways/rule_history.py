"""The `rule_history` table gateway (each rule's recorded changes): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class RuleHistoryRows(Gateway):
    """Operations on `rule_history` rows, inside the caller's transaction."""
