"""Read model: what importers look up before they write."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class ImportQueries(Gateway):
    """Read-only views; the caller's connection."""
