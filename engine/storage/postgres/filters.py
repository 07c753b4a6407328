"""PostgreSQL's rendering of a search's filters (engine/storage/indexes.py, `MemoryFilter`): a
WHERE fragment over memory columns (or `memory_vectors`' filter columns). `user` is a reserved word
here (bare, it is CURRENT_USER), so the column is quoted by this renderer itself. Parameters are
written `?`, the form every statement of this adapter's keyword and vector code is written in
(postgres/connection.py binds them as psycopg's). Values always go in as parameters."""

from __future__ import annotations

from typing import Any

from engine.storage.indexes import FILTER_FIELDS, MemoryFilter

_COLUMN = {"kind": "kind", "category": "category", "agent": "agent", "user": '"user"'}


def where(filters: MemoryFilter, prefix: str = "") -> tuple[str, list[Any]]:
    """(fragment, parameters); `prefix` like 'm.' names the memories' alias."""
    tiers = filters.tiers
    parts = [f"{prefix}tier IN ({','.join('?' * len(tiers))})" if tiers else "FALSE"]
    params: list[Any] = list(tiers)
    for col in FILTER_FIELDS:
        val = getattr(filters, col)
        if val is not None:
            parts.append(f"{prefix}{_COLUMN[col]} = ?")
            params.append(val)
    return " AND ".join(parts), params
