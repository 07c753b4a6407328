"""Read model: what a forget case selects, scans and verifies."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class ForgetQueries(Gateway):
    """Read-only views; the caller's connection."""
