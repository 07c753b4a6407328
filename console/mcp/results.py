"""Typed results of the MCP tools: each becomes the tool's output schema, and every result
carries the ids it touched (and, for recall, each hit's whole score breakdown)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from engine.types import to_json


class _Out(BaseModel):
    @classmethod
    def of(cls, obj: Any, **extra: Any):
        """Build from an engine dataclass (unknown fields ignored; new engine fields never break)."""
        return cls.model_validate({**to_json(obj), **extra})


class Remembered(_Out):
    id: int = Field(description="The memory's id (the existing one when a near-duplicate was reinforced)")
    deduplicated: bool = Field(description="True: a near-duplicate existed and was reinforced instead")


class Breakdown(_Out):
    bm25_rank: int | None
    bm25_score: float | None
    vector_rank: int | None
    vector_similarity: float | None
    rrf: float
    context: float = 0.0
    strength: float
    importance: float
    recency: float
    final: float


class RecallHit(_Out):
    id: int
    content: str
    kind: str
    category: str
    tier: str
    agent: str
    user: str
    metadata: dict[str, Any]
    score: float
    breakdown: Breakdown


class Recalled(_Out):
    query: str
    mode: str = Field(description="What ran: hybrid | keyword (model still loading) | vector")
    hits: list[RecallHit]
    message: str | None = None
    elsewhere: dict[str, Any] = Field(default_factory=dict)


class Explained(_Out):
    query: str
    memory_id: int
    found: bool
    in_top_k: bool
    k: int
    mode: str
    excluded_by: list[str]
    bm25_rank: int | None = None
    vector_rank: int | None = None
    vector_similarity: float | None = None
    matched_terms: list[str]
    unmatched_terms: list[str]
    final: float | None
    kth_final: float | None
    summary: str


class Item(_Out):
    id: int
    category: str
    content: str
    agent: str
    tier: str


class RuleOut(_Out):
    id: int
    text: str
    domain: str
    agent: str
    source: str
    score: float
    status: str
    pinned: bool


class Booted(_Out):
    agent: str | None
    tokens: int = Field(description="Estimated tokens of `text`")
    text: str = Field(description="The fenced <memory-context> block to load")
    decisions: list[Item]
    tasks: list[Item]
    rejections: list[Item]
    rules: list[RuleOut]


class FlowOut(_Out):
    id: int
    name: str
    domain: str
    agent: str
    triggers: list[str]
    needs_approval: bool
    steps: list[str]
    status: str
    description: str


class FlowMatchOut(_Out):
    flow: FlowOut
    via: str = Field(description="trigger | text")
    matched: list[str]
    score: float


class FlowsChecked(_Out):
    text: str
    matches: list[FlowMatchOut]


class GateChecked(_Out):
    text: str
    agent: str | None
    flows: list[FlowMatchOut]
    rejections: list[Item]
    state: list[Item]
    critical_rules: list[RuleOut]
    block: str = Field(description="The whole check as one readable block")


class GateRecorded(_Out):
    outcome: str
    flow: str | None
    run_id: int | None
    state_memory_id: int
    consolidated: bool


class Rejected(_Out):
    memory_id: int
    rule_id: int


class Logged(_Out):
    session_id: str
    message_id: int
    created_session: bool = Field(description="True: this call opened the session")
