"""Read model: what the search, the memory lists and the façade read across memories and sessions."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class MemoryQueries(Gateway):
    """Read-only views; the caller's connection."""
