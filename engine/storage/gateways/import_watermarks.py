"""The `import_watermarks` table gateway (how far each import source was read): its only writer."""

from __future__ import annotations

from engine.storage.gateways.base import Gateway


class ImportWatermarkRows(Gateway):
    """Operations on `import_watermarks` rows, inside the caller's transaction."""
