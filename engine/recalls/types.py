"""Typed values the recall log and the retrieval checks hand across the engine's boundary."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

DOORS = ("mcp", "hermes", "cli", "engine", "console")


@dataclass(frozen=True)
class LoggedHit:
    id: int
    score: float
    parts: dict[str, Any]  # the breakdown's parts (ranks, scores, weights) as returned


@dataclass(frozen=True)
class Recall:
    id: int
    at: float
    door: str  # which door the agent came through: mcp | hermes | cli | engine
    agent: str  # the agent the recall was for (the door's agent, else the filter's)
    actor: str  # the verified identity of the call (MCP token's actor, OS user, ...)
    query: str
    filters: dict[str, Any]  # tier, kind, category, agent, user, as searched
    mode: str
    k: int
    hits: list[LoggedHit]
    keyword_scope: list[str]
    latency_ms: float | None
    model: str

    # (rank as returned, forget case) of hits a forget took out: their ids are gone with them
    forgotten: list[tuple[int, int]] = field(default_factory=list)

    @classmethod
    def of(cls, r: Any) -> Recall:
        hits, forgotten = [], []
        for rank, h in enumerate(_json(r["hits"], []), 1):
            if not isinstance(h, dict):
                continue
            if h.get("id") is None:
                forgotten.append((rank, int(h.get("forgotten_by") or 0)))
            else:
                hits.append(LoggedHit(int(h["id"]), float(h["score"]), dict(h.get("parts") or {})))
        return cls(
            int(r["id"]), float(r["at"]), r["door"], r["agent"], r["actor"], r["query"],
            _json(r["filters"], {}), r["mode"], int(r["k"]), hits, _json(r["keyword_scope"], []),
            None if r["latency_ms"] is None else float(r["latency_ms"]), r["model"], forgotten,
        )  # fmt: skip

    @property
    def hit_ids(self) -> list[int]:
        return [h.id for h in self.hits]


@dataclass(frozen=True)
class HitChange:
    """One memory whose place in the answer changed between the logged recall and now."""

    memory_id: int | None  # None: a hit a forget took out of the log (its id went with it)
    change: str  # "left" | "entered"
    was_rank: int | None  # 1-based, in the logged answer
    now_rank: int | None  # 1-based, in today's answer
    cause: str  # what the store knows changed it (merged into #M, forgotten by case #F, ...)


@dataclass(frozen=True)
class ReplayDiff:
    recall_id: int
    query: str
    then: list[LoggedHit]
    now: list[LoggedHit]
    left: list[HitChange]
    entered: list[HitChange]
    mode: str  # the mode that ran now (keyword-only while the model loads)
    latency_ms: float
    message: str | None = None

    @property
    def same(self) -> bool:
        return not self.left and not self.entered


@dataclass(frozen=True)
class Check:
    id: int
    query: str
    filters: dict[str, Any]
    mode: str
    memory_id: int
    k: int
    created_at: float
    created_by: str
    recall_id: int | None
    due: bool
    last_run_at: float | None
    last_ok: bool | None  # None: never run
    last_rank: int | None
    last_why: str

    @classmethod
    def of(cls, r: Any) -> Check:
        return cls(
            int(r["id"]), r["query"], _json(r["filters"], {}), r["mode"], int(r["memory_id"]), int(r["k"]),
            float(r["created_at"]), r["created_by"], None if r["recall_id"] is None else int(r["recall_id"]),
            bool(r["due"]), None if r["last_run_at"] is None else float(r["last_run_at"]),
            None if r["last_ok"] is None else bool(r["last_ok"]),
            None if r["last_rank"] is None else int(r["last_rank"]), r["last_why"] or "",
        )  # fmt: skip

    @property
    def status(self) -> str:
        return "not run" if self.last_ok is None else ("pass" if self.last_ok else "FAIL")


@dataclass(frozen=True)
class CheckRun:
    checks: list[Check] = field(default_factory=list)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.last_ok is False]

    @property
    def ok(self) -> bool:
        return not self.failed


def _json(raw: Any, default: Any) -> Any:
    try:
        v = json.loads(raw) if raw else default
    except (TypeError, ValueError):
        return default
    return v if isinstance(v, type(default)) else default
