"""What every gateway and read model is built on: the connection it runs on."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class Gateway:
    """Bound to one connection (an adapter's), for the duration of a read or write."""

    def __init__(self, conn: Any) -> None:
        # The adapter's own connection: its SQL runs here, inside the caller's transaction.
        self.conn = conn


def checked(names: Iterable[str], allowed: Iterable[str], what: str) -> list[str]:
    """`names` as a list, or ValueError naming those outside `allowed` (column names are never
    input: a gateway checks them against its fixed set before any SQL is built)."""
    cols = list(names)
    bad = set(cols) - set(allowed)
    if bad:
        raise ValueError(f"not {what}: {', '.join(sorted(bad))[:200]}")
    return cols
