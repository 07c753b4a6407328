"""The `import_watermarks` table gateway (how far each import source was read): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class ImportWatermarkRows(Gateway):
    """Operations on `import_watermarks` rows, inside the caller's transaction. A watermark's value
    is JSON text; what it holds is the importer's (engine/importers/common.py)."""

    def value(self, source: str) -> str | None:
        """The stored value of `source`'s watermark (JSON text), or None if it has none."""
        raise NotImplementedError

    def put(self, source: str, value: str, now: float) -> None:
        """Set `source`'s watermark to `value` (JSON text) at `now`, adding it if it is new."""
        raise NotImplementedError
