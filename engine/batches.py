"""Lists in batches: SQLite caps bound parameters per statement (32,766 in the builds here), so an
id list crosses in chunks of CHUNK; PostgreSQL takes one array parameter and needs none."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
CHUNK = 500


def chunked(items: Iterable[T], size: int = CHUNK) -> Iterator[list[T]]:
    """`items` in lists of at most `size`."""
    batch: list[T] = []
    for it in items:
        batch.append(it)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
