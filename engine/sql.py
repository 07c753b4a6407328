"""Portable SQL helpers shared by every service: placeholders for id lists and chunking, so no
module spells `','.join('?' * n)` again. SQLite caps bound parameters per statement (32,766 in the
builds here; PostgreSQL 65,535), hence chunks."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")
CHUNK = 500


def marks(n: int) -> str:
    """`?,?,?` for n parameters (n >= 1)."""
    if n < 1:
        raise ValueError("an id list needs at least one id")
    return ",".join("?" * n)


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


def in_list(column: str, ids: Sequence[object]) -> tuple[str, list[object]]:
    """(`column IN (?,?)`, params) for a non-empty id list; `1 = 0` for an empty one."""
    if not ids:
        return "1 = 0", []
    return f"{column} IN ({marks(len(ids))})", list(ids)
