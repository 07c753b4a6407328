"""The `forget_requests` table gateway (forget cases): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class ForgetRequestRows(Gateway):
    """Operations on `forget_requests` rows, inside the caller's transaction."""
