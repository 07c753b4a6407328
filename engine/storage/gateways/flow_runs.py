"""The `flow_runs` table gateway (recorded runs of a procedure): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class FlowRunRows(Gateway):
    """Operations on `flow_runs` rows, inside the caller's transaction."""
