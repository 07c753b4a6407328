"""Typed records at the engine's surface. Screens, the CLI and tests see these, never rows."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from typing import Any

KINDS = ("episodic", "semantic", "procedural")
TIERS = ("core", "active", "archived")
CATEGORIES = (
    "decision",
    "task",
    "rejected",
    "discovery",
    "learning",
    "context",
    "preference",
    "fact",
    "general",
)
SEARCH_MODES = ("hybrid", "keyword", "vector")


def to_json(obj: Any) -> Any:
    """Dataclasses (nested) -> plain JSON-able values. A non-finite float (a malformed row) becomes
    None: strict JSON has no NaN/Infinity, and one bad number must not sink a whole document."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if hasattr(obj, "__dataclass_fields__"):
        # Field by field, not asdict(): asdict deep-copies everything first, then this walk
        # would copy it again (a curator run report of 1,000 proposals paid both).
        return {f.name: to_json(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    return obj


def load_json(text: str | None, default: Any = None) -> Any:
    if not text:
        return {} if default is None else default
    try:
        return json.loads(text)
    except ValueError:
        return {} if default is None else default


@dataclass
class Memory:
    id: int
    content: str
    kind: str
    category: str
    tier: str
    agent: str
    user: str
    importance: float
    strength: float
    access_count: int
    created_at: float
    last_accessed_at: float | None
    last_reinforced_at: float
    pinned: bool
    session_id: str | None
    message_id: int | None
    metadata: dict
    absorbed_into: int | None
    embedded: bool


@dataclass
class AddResult:
    id: int
    deduplicated: bool


@dataclass
class Breakdown:
    bm25_rank: int | None
    bm25_score: float | None
    vector_rank: int | None
    vector_similarity: float | None
    rrf: float
    strength: float
    importance: float
    recency: float
    final: float
    # Hybrid only: share of the fused scores of the memories written just before and after this
    # one in the same session (SearchSettings.session_context); final weights rrf + context.
    context: float = 0.0
    # Hybrid only: factor on rrf for the speaker / month / year the question names
    # (SearchSettings.speaker_boost, date_boost); final weights rrf x boost + context.
    boost: float = 1.0


@dataclass
class Hit:
    id: int
    content: str
    kind: str
    category: str
    tier: str
    agent: str
    user: str
    metadata: dict
    score: float
    breakdown: Breakdown
    # No keyword match and a cosine below search.weak_below: a match in name only (`*`, an emoji).
    weak: bool = False


@dataclass
class SearchResult:
    query: str
    mode: str  # what actually ran: hybrid | keyword | vector
    hits: list[Hit]
    elsewhere: dict = field(default_factory=dict)
    message: str | None = None  # why a query returned nothing, or that the model is loading
    # Big databases: how the keyword query was bounded (words left out, newest-only scoring).
    keyword_scope: list[str] = field(default_factory=list)


@dataclass
class Explanation:
    query: str
    memory_id: int
    found: bool  # the memory exists
    in_top_k: bool
    k: int
    mode: str
    excluded_by: list[str]  # filters, tier or state that keep it out of the searched set
    bm25_rank: int | None  # full rank among all keyword matches (1-based), None if no match
    bm25_matches: int  # how many memories the keyword query matched
    vector_rank: int | None  # full rank by cosine among searchable memories
    vector_similarity: float | None
    matched_terms: list[str]
    unmatched_terms: list[str]
    final: float | None
    kth_final: float | None  # the k-th hit's final score (the bar to clear)
    summary: str  # plain words
    # How big-database cost bounds shaped the keyword query (words left out, newest-only scoring).
    keyword_scope: list[str] = field(default_factory=list)


@dataclass
class Session:
    id: str
    agent: str | None
    user: str | None
    source: str | None
    model: str | None
    title: str | None
    started_at: float | None
    ended_at: float | None
    parent_session_id: str | None
    metadata: dict
    message_count: int = 0


@dataclass
class Message:
    id: int
    session_id: str
    role: str
    content: str
    tool_name: str | None
    at: float | None
    token_count: int | None
    metadata: dict = field(default_factory=dict)


@dataclass
class MessageHit:
    message: Message
    snippet: str
    session_title: str | None


@dataclass
class SessionDetail:
    session: Session
    messages: list[Message]
    parent: Session | None
    children: list[Session]


@dataclass
class Counts:
    memories_by_tier: dict[str, int]
    rules: int
    pending_proposals: int
    open_forget_requests: int
    sessions: int
    # Forget deadlines (issue #25): open cases past theirs, and whole days to the nearest one.
    overdue_forget_requests: int = 0
    next_forget_due_days: int | None = None
