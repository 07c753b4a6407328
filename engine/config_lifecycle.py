"""Settings sections for what happens to stored memories over time: decay (strength and rule
scores), the lifecycle (flows, boot context, gate posts), the curator, and forget. Part of the one
settings object (engine/config.py, which every caller imports them from)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DecaySettings:
    # Half-lives in days: episodic fades fastest, procedural slowest.
    half_life_days: dict = field(
        default_factory=lambda: {"episodic": 7.0, "semantic": 30.0, "procedural": 90.0}
    )
    archive_threshold: float = 0.3
    reinforce_boost: float = 0.2  # strength added by a reinforcement (capped at 1)
    rule_grace_days: float = 7.0  # a rule unreinforced this long starts to lose score
    rule_daily_loss: float = 0.5
    rule_reinforce_boost: float = 1.0  # score a rule gains when reinforced (capped at 10)
    rule_violation_boost: float = 0.5  # a broken rule proved relevant: it gains this and its clock resets
    snapshot_step: float = 0.05  # a pass rewrites a stored strength only when it fell this much

    def rate(self, kind: str) -> float:
        """Per-second decay rate λ for a kind: strength(t) = s0 · exp(-λ · t)."""
        hl = float(self.half_life_days.get(kind, self.half_life_days.get("semantic", 30.0)))
        return math.log(2) / (hl * 86400.0)


@dataclass(frozen=True)
class CuratorSettings:
    merge_threshold: float = 0.90  # cosine at or above which two memories/rules are near-duplicates
    rule_prefix_chars: int = 40  # rules sharing this many leading characters are near-duplicates
    max_cluster: int = 25  # members per merge proposal (larger clusters are split)
    stale_days: float = 14.0  # no activity this long: reported as stale
    archive_days: float = 30.0  # no activity this long: proposed for archiving
    promote_categories: tuple = ("learning", "discovery")
    promote_min_reinforcements: int = 3  # access/reinforcement count that earns a rule
    promote_rule_score: float = 5.0
    retire_days: float = 60.0  # a dormant rule unreinforced this long is proposed for retirement
    merged_rule_bonus: float = 0.5  # a merged rule keeps the higher score plus this
    auto_apply: tuple = ()  # kinds applied without approval (explicit policy; off by default)


@dataclass(frozen=True)
class LifecycleSettings:
    flow_flag_below: float = 0.6  # a flow under this effectiveness is flagged...
    flow_flag_min_runs: int = 5  # ...once it has at least this many runs
    flow_trend_window: int = 10  # recent runs compared with the window before them
    boot_max_rules: int = 20  # critical/active rules in a boot context
    boot_max_items: int = 15  # decisions, tasks, rejections each
    chars_per_token: float = 4.0  # token estimate for boot context
    state_similarity: float = 0.5  # word overlap at which a gate-post state entry consolidates


@dataclass(frozen=True)
class ForgetSettings:
    # On a PostgreSQL server, scan the data directory and the WAL when this host can read them.
    # false: that level says "not checked" (by this setting); the tables are still rewritten.
    host_files: bool = True
    # Read replicas (streaming standbys, `postgresql://` URLs) verification also checks: each is
    # waited for until it replayed past the forget (at most replica_wait seconds), then scanned
    # logically (engine/forget/replicas.py). Empty: replicas are named as out of reach.
    replicas: tuple = ()
    replica_wait: float = 10.0
    # Days a new forget case has before it is overdue (issue #25: shown as days left).
    deadline_days: float = 30.0
    # Operators who must sign off a case: 2 = a second operator, not the requester, approves the
    # previewed scope before it can execute (issue #27's two-person rule). 1 = no approval step.
    approvals: int = 1
