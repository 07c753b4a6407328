"""The `recall_log` table gateway (one row per agent recall: what was asked, what came back): its
only writer. Not audited row by row (it is itself a log); its pruning is (engine/recalls/log.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.gateways.base import Gateway

# The columns a row is written with, in order (the id is the table's).
COLUMNS = (
    "at", "door", "agent", "actor", "query", "filters", "mode", "k", "hits", "hit_ids",
    "keyword_scope", "latency_ms", "model",
)  # fmt: skip


class RecallLogRows(Gateway):
    """Operations on `recall_log` rows, inside the caller's transaction."""

    def insert(self, values: Sequence[Any]) -> int:
        """Append one row (`values` in COLUMNS' order) in one statement; its id."""
        raise NotImplementedError

    def prune(self, before: float, keep: int) -> int:
        """Delete rows logged before `before` and all but the newest `keep`; how many went."""
        raise NotImplementedError

    def set_hits(self, log_id: int, hits: str, hit_ids: str) -> None:
        """Rewrite one row's returned hits (a forget took some of them away)."""
        raise NotImplementedError
