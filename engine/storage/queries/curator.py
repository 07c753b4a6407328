"""Read model: the curator queue's and report's views."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class CuratorQueries(Gateway):
    """Read-only views; the caller's connection."""
