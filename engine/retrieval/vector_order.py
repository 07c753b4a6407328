"""The order of vector search answers, the same from the in-memory matrix and the store's index."""

from __future__ import annotations


def ordered(pairs: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Best first; ties (to 6 decimals, below which numpy and the store's vector index sum
    differently) by id, so the matrix and the store list the same memories in the same order."""
    return sorted(pairs, key=lambda p: (-round(p[1], 6), p[0]))
