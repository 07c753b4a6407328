"""The `meta` table gateway (the engine's key/value settings and stamps): its only writer. Values
are text; the caller converts (`repr(float)`, `str(int)`)."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class MetaRows(Gateway):
    """Operations on `meta` rows, inside the caller's transaction."""

    def get(self, key: str) -> str | None:
        """The value stored under `key` (None: not set)."""
        raise NotImplementedError

    def all(self) -> dict[str, str]:
        """Every key and its value."""
        raise NotImplementedError

    def put(self, key: str, value: str) -> None:
        """Set `key` to `value`, replacing what was there."""
        raise NotImplementedError

    def put_missing(self, key: str, value: str) -> None:
        """Set `key` to `value` only when it is not set yet (an id minted once)."""
        raise NotImplementedError
