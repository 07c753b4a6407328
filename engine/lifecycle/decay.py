"""Decay math: pure functions for memory strength and rule scores. Each storage adapter renders the
same formulas in its own SQL (engine/storage/{sqlite,postgres}/decay.py and the lifecycle read
models) so a pass or a forecast runs as one set-based statement.

Memory strength is a closed form of (anchor strength, time of last reinforcement, rate of its kind):

    strength(t) = anchor · exp(-λ_kind · (t - last_reinforced_at))       λ = ln 2 / half-life

so it can be computed on read, and the moment it crosses the archive threshold is known in advance:

    archive_at = last_reinforced_at + ln(anchor / threshold) / λ_kind

Rule scores lose `rule_daily_loss` per daily cycle once a rule has gone `rule_grace_days` without
reinforcement. Cycles are counted on a grid anchored at (last reinforced + grace), and
`last_decayed_at` remembers the last cycle applied, so a pass at the same clock applies nothing new.
"""

from __future__ import annotations

import math
from typing import Any

from engine.clock import DAY
from engine.config import DecaySettings
from engine.errors import InvalidInput, cut
from engine.storage.lifecycle import DecayClock
from engine.types import KINDS

# Bands operators know: 9–10 critical, 7–8 and 5–6 active, 3–4 dormant, 1–2 (and below) retired.
BANDS = ((9.0, "critical"), (5.0, "active"), (3.0, "dormant"))
STATUS_RANK = {"retired": 0, "dormant": 1, "active": 2, "critical": 3}
SCORE_MIN, SCORE_MAX = 0.0, 10.0
RETIRE_EDGE = BANDS[-1][0]  # below this a rule is retired and stops decaying


def band(score: float) -> str:
    """The status a score implies (status follows the band unless the rule is pinned)."""
    for edge, status in BANDS:
        if score >= edge:
            return status
    return "retired"


def check_days(days: Any) -> float:
    """A forecast window in days: more than 0, at most ten years."""
    try:
        d = float(days)
    except (TypeError, ValueError):
        raise InvalidInput(f"days must be a number, not {cut(days)}") from None
    if not 0 < d <= 3650:
        raise InvalidInput(f"days must be more than 0 and at most 3650, not {d:g}")
    return d


def clamp_score(score: float) -> float:
    return max(SCORE_MIN, min(SCORE_MAX, float(score)))


# -- memories ----------------------------------------------------------------------------------------
def rates_for(settings: DecaySettings, half_lives: dict | None = None) -> dict[str, float]:
    """Per-second λ for every kind, from the settings or a what-if of half-lives in days."""
    if half_lives:
        bad = {k: v for k, v in half_lives.items() if k not in KINDS or not float(v) > 0}
        if bad:
            raise InvalidInput(f"half-lives must be positive days per kind ({', '.join(KINDS)}): {bad}")
        merged = {**settings.half_life_days, **{k: float(v) for k, v in half_lives.items()}}
        settings = DecaySettings(**{**settings.__dict__, "half_life_days": merged})
    return {k: settings.rate(k) for k in KINDS}


def half_lives_for(settings: DecaySettings, half_lives: dict | None = None) -> dict[str, float]:
    return {k: float({**settings.half_life_days, **(half_lives or {})}.get(k, 30.0)) for k in KINDS}


def strength_at(anchor: float, last_reinforced_at: float, rate: float, t: float) -> float:
    return float(anchor) * math.exp(-rate * max(0.0, t - float(last_reinforced_at)))


def crossing_time(anchor: float, last_reinforced_at: float, rate: float, threshold: float) -> float:
    """When strength falls to the threshold (already past it: the anchor time itself)."""
    if anchor <= threshold:
        return float(last_reinforced_at)
    return float(last_reinforced_at) + math.log(anchor / threshold) / rate


def clock_for(settings: DecaySettings, now: float, half_lives: dict | None = None) -> DecayClock:
    """The formulas' inputs as the storage port takes them: `now`, the archive threshold and λ
    per kind (from the settings or a what-if of half-lives in days)."""
    return DecayClock(float(now), settings.archive_threshold, rates_for(settings, half_lives))


# -- rules ---------------------------------------------------------------------------------------------
def rule_decays(status: str, pinned: bool, score: float) -> bool:
    """Critical, pinned and retired rules never lose score on their own."""
    return not pinned and status in ("active", "dormant") and score < BANDS[0][0]


def rule_cycles(
    last_reinforced_at: float | None,
    created_at: float,
    last_decayed_at: float | None,
    t: float,
    settings: DecaySettings,
) -> tuple[int, float | None]:
    """Daily cycles due at `t` that were not applied yet, and the grid time of the last one."""
    base = (
        float(last_reinforced_at if last_reinforced_at is not None else created_at)
        + settings.rule_grace_days * DAY
    )
    j1 = math.floor((t - base) / DAY) if t >= base else -1
    j0 = (
        math.floor((last_decayed_at - base) / DAY)
        if last_decayed_at is not None and last_decayed_at >= base
        else -1
    )
    if j1 <= j0:
        return 0, last_decayed_at
    return j1 - j0, base + j1 * DAY


def rule_score_at(rule, t: float, settings: DecaySettings) -> tuple[float, str]:
    """(score, status) a rule would have at `t` with no reinforcement in between.

    `rule` is anything with score, status, pinned, last_reinforced_at, created_at,
    last_decayed_at (a Rule or a row).
    """
    get = (lambda k: getattr(rule, k)) if hasattr(rule, "__dataclass_fields__") else rule.__getitem__
    score, status = float(get("score")), get("status")
    if not rule_decays(status, bool(get("pinned")), score):
        return score, status
    cycles, _ = rule_cycles(get("last_reinforced_at"), get("created_at"), get("last_decayed_at"), t, settings)
    new = clamp_score(score - settings.rule_daily_loss * min(cycles, cycles_to_retire(score, settings)))
    return new, band(new)


def cycles_to_retire(score: float, settings: DecaySettings) -> int:
    """Daily losses until a score falls into the retired band, where decay stops; so one pass
    after many days ends where daily passes would have."""
    return max(1, math.floor((score - RETIRE_EDGE) / settings.rule_daily_loss) + 1)
