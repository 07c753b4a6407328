"""PostgreSQL's rendering of a search's filters (engine/storage/indexes.py, `MemoryFilter`): a
WHERE fragment over memory columns (or `memory_vectors`' filter columns) in PostgreSQL's own SQL:
`%s` placeholders, the tiers as one array parameter (`tier = ANY(%s)`), and the column `user`
quoted (a reserved word here: bare, it is CURRENT_USER). Values always go in as parameters."""

from __future__ import annotations

from typing import Any

from engine.storage.indexes import FILTER_FIELDS, MemoryFilter

_COLUMN = {"kind": "kind", "category": "category", "agent": "agent", "user": '"user"'}


def where(filters: MemoryFilter, prefix: str = "") -> tuple[str, list[Any]]:
    """(fragment, parameters); `prefix` like 'm.' names the memories' alias."""
    tiers = list(filters.tiers)
    parts = [f"{prefix}tier = ANY(%s)" if tiers else "FALSE"]
    params: list[Any] = [tiers] if tiers else []
    for col in FILTER_FIELDS:
        val = getattr(filters, col)
        if val is not None:
            parts.append(f"{prefix}{_COLUMN[col]} = %s")
            params.append(val)
    return " AND ".join(parts), params
