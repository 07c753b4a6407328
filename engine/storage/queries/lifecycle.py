"""Read model: decay forecasts, rule and flow views."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class LifecycleQueries(Gateway):
    """Read-only views; the caller's connection."""
