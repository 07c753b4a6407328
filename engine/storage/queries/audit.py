"""Read model: the audit trail's walks and views."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class AuditQueries(Gateway):
    """Read-only views; the caller's connection."""
