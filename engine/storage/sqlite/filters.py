"""SQLite's rendering of a search's filters (engine/storage/indexes.py, `MemoryFilter`): a WHERE
fragment over memory columns (or vec0's filter columns) with `?` parameters. Column names are
fixed here; values always go in as parameters."""

from __future__ import annotations

from typing import Any

from engine.storage.indexes import FILTER_FIELDS, MemoryFilter


def where(filters: MemoryFilter, prefix: str = "") -> tuple[str, list[Any]]:
    """(fragment, parameters); `prefix` like 'm.' names the memories' alias."""
    tiers = filters.tiers
    parts = [f"{prefix}tier IN ({','.join('?' * len(tiers))})" if tiers else "1 = 0"]
    params: list[Any] = list(tiers)
    for col in FILTER_FIELDS:
        val = getattr(filters, col)
        if val is not None:
            parts.append(f"{prefix}{col} = ?")
            params.append(val)
    return " AND ".join(parts), params
