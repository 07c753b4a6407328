"""What a caller may store as a memory: text checks (no lone surrogates, NULs or oversize text), a
memory's fields validated and filled with defaults, and memory ids as whole numbers. Nothing here
touches the database."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from engine.errors import InvalidInput, cut
from engine.storage.gateways.memories import Kind, NewMemory, Tier
from engine.types import KINDS, TIERS

MAX_CONTENT = 1_000_000
FIELDS = (
    "content",
    "kind",
    "category",
    "tier",
    "agent",
    "user",
    "importance",
    "metadata",
    "session_id",
    "message_id",
    "pinned",
    "created_at",
)


def check_text(value: Any, what: str, *, allow_empty: bool = False, limit: int = MAX_CONTENT) -> str:
    """Refuse what cannot be stored faithfully: non-strings, lone surrogates, NULs, oversize."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be text, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{what} contains a lone surrogate (not valid Unicode text)") from None
    if "\x00" in value:
        raise InvalidInput(f"{what} contains a NUL character")
    if not allow_empty and not value.strip():
        raise InvalidInput(f"{what} is empty")
    if len(value) > limit:
        raise InvalidInput(f"{what} is {len(value):,} characters; the limit is {limit:,}")
    return value


def normalize_item(item: Mapping[str, Any]) -> NewMemory:
    """A memory as the caller gave it, validated and filled with defaults (nothing written)."""
    unknown = set(item) - set(FIELDS) - {"dedup"}
    if unknown:
        raise InvalidInput(f"unknown memory field(s): {', '.join(sorted(unknown))}")
    content = check_text(item.get("content"), "content")
    kind: Kind = item.get("kind") or "semantic"  # checked below
    category = item.get("category") or "general"
    tier: Tier = item.get("tier") or "active"
    agent = check_text(item.get("agent") or "", "agent", allow_empty=True, limit=200)
    user = check_text(item.get("user") or "", "user", allow_empty=True, limit=200)
    metadata = item.get("metadata") or {}
    if kind not in KINDS:
        raise InvalidInput(f"unknown kind {cut(kind)}; use one of {', '.join(KINDS)}")
    if tier not in TIERS:
        raise InvalidInput(f"unknown tier {cut(tier)}; use one of {', '.join(TIERS)}")
    check_text(category, "category", limit=64)
    imp = item.get("importance", 0.5)
    try:
        imp = float(0.5 if imp is None else imp)
    except (TypeError, ValueError):
        raise InvalidInput(f"importance must be a number between 0 and 1, not {cut(imp)}") from None
    if not (0.0 <= imp <= 1.0) or math.isnan(imp):
        raise InvalidInput(f"importance must be between 0 and 1, not {imp}")
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata must be a JSON object")
    try:
        metadata_json = json.dumps(metadata, ensure_ascii=False)
        metadata_json.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise InvalidInput(f"metadata is not valid JSON text ({exc})") from None
    return NewMemory(
        content=content, kind=kind, category=category, tier=tier, agent=agent, user=user,
        importance=imp, metadata=metadata, metadata_json=metadata_json,
        session_id=item.get("session_id"), message_id=item.get("message_id"),
        pinned=1 if item.get("pinned") else 0, created_at=item.get("created_at"),
    )  # fmt: skip


def as_memory_id(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInput(f"a memory id is a whole number, not {cut(value)}") from None
