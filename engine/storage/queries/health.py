"""Read model: what doctor checks."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class HealthQueries(Gateway):
    """Read-only views; the caller's connection."""
