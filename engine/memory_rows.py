"""A `memories` row as the Memory dataclass the engine hands out (split out of engine/memories.py)."""

from __future__ import annotations

from typing import Any

from engine.types import Memory, load_json


def row_to_memory(r: Any) -> Memory:
    return Memory(
        id=r["id"],
        content=r["content"],
        kind=r["kind"],
        category=r["category"],
        tier=r["tier"],
        agent=r["agent"],
        user=r["user"],
        importance=r["importance"],
        strength=r["strength"],
        access_count=r["access_count"],
        created_at=r["created_at"],
        last_accessed_at=r["last_accessed_at"],
        last_reinforced_at=r["last_reinforced_at"],
        pinned=bool(r["pinned"]),
        session_id=r["session_id"],
        message_id=r["message_id"],
        metadata=load_json(r["metadata"]),
        absorbed_into=r["absorbed_into"],
        embedded=bool(r["embedded"]),
    )
