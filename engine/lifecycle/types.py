"""Typed records of the memory lifecycle: decay passes and forecasts, rules and their score
history, flows and their runs, boot context and action gates. Panes, the CLI and tests see these.

Times are epoch seconds (UTC); `engine.clock.iso` renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

RuleStatus = Literal["critical", "active", "dormant", "retired"]
RuleSource = Literal["rejection", "learning", "discovery", "manual"]  # or "memory:<id>"
FlowStatus = Literal["active", "disabled"]
FlowOutcome = Literal["pass", "fail"]
DecayScope = Literal["all", "memories", "rules"]
RuleOrder = Literal["score", "recent", "created", "violations", "id"]

RULE_STATUSES: tuple[RuleStatus, ...] = ("critical", "active", "dormant", "retired")
RULE_SOURCES: tuple[RuleSource, ...] = ("rejection", "learning", "discovery", "manual")
FLOW_STATUSES: tuple[FlowStatus, ...] = ("active", "disabled")
FLOW_OUTCOMES: tuple[FlowOutcome, ...] = ("pass", "fail")
DECAY_SCOPES: tuple[DecayScope, ...] = ("all", "memories", "rules")


# -- decay --------------------------------------------------------------------------------------------
@dataclass
class DecayPassResult:
    """What one decay pass changed (all zero for a second pass at the same clock)."""

    now: float
    dry_run: bool
    memories_scheduled: int  # archive_at computed for new / reinforced memories
    memories_decayed: int  # decaying memories whose strength fell since the previous pass
    memories_archived: int  # crossed the archive threshold: tier active -> archived
    rules_decayed: int  # score lowered by the daily loss
    rules_demoted: int  # status moved down a band, not to retired
    rules_retired: int  # status became retired
    snapshots_refreshed: int = 0  # stored `strength` rewritten (only with refresh_snapshots)
    archived_ids: list[int] = field(default_factory=list)  # capped; see archived_ids_truncated
    archived_ids_truncated: bool = False
    demoted_rule_ids: list[int] = field(default_factory=list)
    retired_rule_ids: list[int] = field(default_factory=list)


@dataclass
class CurvePoint:
    day: float  # days after the curve's start
    at: float  # epoch seconds
    value: float  # strength (0–1) for a memory, score (0–10) for a rule


@dataclass
class DecayCurve:
    """Projected strength (memory) or score (rule) if nothing reinforces it."""

    target_kind: str  # "memory" | "rule"
    target_id: int
    label: str  # kind for a memory, status for a rule
    threshold: float  # archive threshold (memory) or retire edge (rule)
    frozen: bool  # pinned / core / critical / retired: the curve is flat
    crosses_at: float | None  # when the value goes below the threshold, if within the window
    points: list[CurvePoint]
    rates: dict | None = None  # half-lives used (memory), when a what-if overrode them


@dataclass
class MemoryForecast:
    id: int
    kind: str
    tier: str
    agent: str
    preview: str
    strength_now: float
    strength_then: float
    crosses_at: float  # when it crosses the archive threshold


@dataclass
class RuleForecast:
    id: int
    text: str
    agent: str
    score_now: float
    score_then: float
    status_now: str
    status_then: str


@dataclass
class Forecast:
    """Who crosses a threshold within `days` if nothing is reinforced. Writes nothing."""

    now: float
    until: float
    days: float
    memories_total: int  # how many memories would be archived (the list may be capped)
    memories: list[MemoryForecast]
    rules: list[RuleForecast]  # rules whose status would change
    by_kind: dict[str, int]  # memories archived by kind
    rates: dict | None = None  # half-lives used, when a what-if overrode them


@dataclass
class ForecastTimeline:
    """Memories that cross the archive threshold on each day of the next `days` if nothing is
    reinforced: counts[kind][i] cross during day i (day 0 also holds those already under it,
    which the next pass archives)."""

    now: float
    days: int
    counts: dict[str, list[int]]
    overdue: int  # already under the threshold at `now`
    total: int
    rates: dict | None = None  # half-lives used, when a what-if overrode them
    cumulative: list[int] = field(default_factory=list)  # archived by the end of day i


@dataclass
class StrengthDistribution:
    """Histogram of current strength per tier: counts[tier][i] covers [edges[i], edges[i+1])."""

    now: float
    edges: list[float]
    counts: dict[str, list[int]]
    below_threshold: dict[str, int]  # active memories already under the archive threshold


# -- rules --------------------------------------------------------------------------------------------
@dataclass
class Rule:
    id: int
    text: str
    domain: str
    agent: str
    source: str  # rejection | learning | discovery | manual (| memory:<id>)
    score: float  # 0–10; bands: 9–10 critical, 5–8 active, 3–4 dormant, below 3 retired
    status: str  # critical | active | dormant | retired
    violations: int
    last_reinforced_at: float | None
    last_decayed_at: float | None
    created_at: float
    pinned: bool
    absorbed_into: int | None
    metadata: dict


@dataclass
class RuleHistoryPoint:
    at: float
    old_score: float | None
    new_score: float
    old_status: str | None
    new_status: str | None
    reason: str
    actor: str


@dataclass
class RuleDetail:
    rule: Rule
    history: list[RuleHistoryPoint]  # oldest first: the score chart's series
    projection: DecayCurve  # next 30 days if nothing reinforces it
    days_since_reinforced: float


@dataclass
class RuleFacets:
    """What the Rules pane's filters offer: every domain and agent a rule has ('' = global)."""

    domains: list[str]
    agents: list[str]
    boot_agents: list[str]  # agents with rules or memories (the boot preview's choices)
    total: int  # rules (absorbed ones excluded)


@dataclass
class RejectResult:
    memory_id: int
    rule_id: int


# -- flows --------------------------------------------------------------------------------------------
@dataclass
class FlowRun:
    id: int
    flow_id: int
    outcome: str  # pass | fail
    note: str
    agent: str
    at: float


@dataclass
class FlowStats:
    uses: int
    passes: int
    fails: int
    effectiveness: float | None  # passes / uses, 3 decimals; None before the first run
    recent_effectiveness: float | None  # over the trend window
    trend: str  # up | down | flat | new
    trend_delta: float  # recent window minus the window before it
    flagged: bool  # below the threshold after the minimum number of runs
    last_run_at: float | None
    recent_outcomes: list[bool]  # oldest first, the trend window (sparkline)


@dataclass
class Flow:
    id: int
    name: str
    domain: str
    agent: str
    triggers: list[str]
    needs_approval: bool
    steps: list[str]
    status: str
    description: str
    created_at: float
    stats: FlowStats


@dataclass
class FlowDetail:
    flow: Flow
    runs: list[FlowRun]  # newest first (capped)
    rolling: list[CurvePoint]  # effectiveness after each run, oldest first


@dataclass
class FlowMatch:
    flow: Flow
    via: str  # "trigger" | "text"
    matched: list[str]  # trigger phrases or terms that matched
    score: float  # higher is a better match


# -- boot and gates -------------------------------------------------------------------------------------
@dataclass
class BootItem:
    id: int
    category: str
    content: str
    agent: str
    tier: str


@dataclass
class BootContext:
    """Exactly what an agent loads at start. `text` is the fenced <memory-context> block."""

    agent: str | None
    at: float
    decisions: list[BootItem]
    tasks: list[BootItem]
    rejections: list[BootItem]
    rules: list[Rule]
    tokens: int  # estimated tokens of `text`
    text: str


@dataclass
class GatePre:
    text: str
    agent: str | None
    flows: list[FlowMatch]
    rejections: list[BootItem]
    state: list[BootItem]  # active state entries (gate post), newest first
    critical_rules: list[Rule]
    block: str  # the whole check as one readable block


@dataclass
class GatePost:
    outcome: str
    flow: str | None
    run_id: int | None
    stats: FlowStats | None
    state_memory_id: int
    consolidated: bool  # True: an existing similar state entry was updated instead
