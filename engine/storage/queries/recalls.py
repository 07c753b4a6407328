"""Read model: the recall log, the retrieval checks, and what became of the memories a recall
returned (their rows, tombstones, merges and audit rows since)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.gateways.base import Gateway


def like_pattern(words: str) -> str:
    """`words` as a LIKE pattern matching them anywhere, their own % and _ escaped with \\."""
    esc = words.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{esc}%"


class RecallQueries(Gateway):
    """Read-only views; the caller's connection."""

    def recalls(self, agent: str | None, since: float | None, text: str | None, limit: int) -> list[Any]:
        """Logged recalls, newest first: of `agent` (agent or actor), at or after `since`, whose
        query holds `text` (case-insensitive)."""
        raise NotImplementedError

    def recall(self, log_id: int) -> Any:
        raise NotImplementedError

    def with_hits(self, memory_ids: Sequence[int]) -> list[tuple[int, str]]:
        """(log id, hits JSON) of the logged recalls that returned one of `memory_ids`."""
        raise NotImplementedError

    def checks(self, due_only: bool = False) -> list[Any]:
        raise NotImplementedError

    def check_counts(self) -> tuple[int, int]:
        """(checks due, checks whose last run failed): the header's refresh asks this first."""
        raise NotImplementedError

    def check(self, check_id: int) -> Any:
        raise NotImplementedError

    def fates(self, memory_ids: Sequence[int]) -> list[Any]:
        """(id, tier, absorbed_into, created_at, updated_at) of the memories that still exist."""
        raise NotImplementedError

    def forgotten_by(self, memory_ids: Sequence[int]) -> dict[int, int]:
        """{memory id: the forget case whose tombstone names it}."""
        raise NotImplementedError

    def merged_by(self, result_ids: Sequence[int]) -> dict[int, int]:
        """{survivor memory id: the applied merge proposal that made it}."""
        raise NotImplementedError

    def audit_since(self, memory_ids: Sequence[int], at: float) -> list[tuple[int, str, str]]:
        """(memory id, action, actor) of the audit rows about these memories after `at`, in order."""
        raise NotImplementedError

    def count(self) -> int:
        raise NotImplementedError
