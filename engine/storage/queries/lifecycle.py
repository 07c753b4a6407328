"""Read model: decay forecasts, rule and flow views, and what boot and the gates read of
memories. Typed arguments in, rows out; each adapter renders its own SQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from engine.storage.gateways.base import Gateway
from engine.storage.lifecycle import DecayClock

RuleOrderName = Literal["score", "recent", "created", "violations", "id"]
RULE_ORDERS: tuple[RuleOrderName, ...] = ("score", "recent", "created", "violations", "id")


@dataclass(frozen=True)
class RuleFilter:
    """Which rules a list shows; None: that filter is not applied.

    agent with include_global also takes rules with no agent; like: substrings (LIKE patterns with
    `\\` as escape, ASCII case-insensitive), any of which the text must match; ids: only these rules
    (a full-text match, already resolved; empty: none)."""

    statuses: tuple[str, ...] = ()
    agent: str | None = None
    include_global: bool = False
    domain: str | None = None
    source: str | None = None
    min_score: float | None = None
    max_score: float | None = None
    pinned: bool | None = None
    include_absorbed: bool = False
    like: tuple[str, ...] | None = None
    ids: Sequence[int] | None = None


@dataclass(frozen=True)
class RuleDecayStep:
    """One decay pass's rule inputs (seconds): the clock, a day, the grace, the daily loss, the
    retire edge below which decay stops, and the status bands ((lowest score, status), highest
    first; below the last: retired; at or above the first, a rule no longer decays)."""

    now: float
    day: float
    grace: float
    loss: float
    edge: float
    bands: tuple[tuple[float, str], ...]


class LifecycleQueries(Gateway):
    """Read-only views; the caller's connection."""

    # -- rules -----------------------------------------------------------------------------------------
    def rules(self, where: RuleFilter, order: RuleOrderName, limit: int) -> list[Any]:
        """Whole rule rows passing `where`, in `order`, at most `limit`."""
        if order not in RULE_ORDERS:
            raise ValueError(f"not a rule order: {order}")
        return self._rules(where, order, int(limit))

    def rule_counts(self, agent: str | None = None) -> dict[str, int]:
        """Rules per status (absorbed rules excluded), only the statuses present."""
        raise NotImplementedError

    def rule_facets(self) -> tuple[list[str], list[str], list[str], int]:
        """(domains of live rules, agents of live rules, agents of memories other than '', live
        rule count); live: not absorbed. Lists sorted."""
        raise NotImplementedError

    def top_rules(self, agent: str | None, statuses: Sequence[str], limit: int) -> list[Any]:
        """Live rules of these statuses for `agent` (with the shared ones; None or '': every
        agent), by score then recency."""
        if not statuses:
            return []
        return self._top_rules(agent, list(statuses), int(limit))

    def rules_decaying(self, agent: str | None = None) -> list[Any]:
        """Whole rows of the rules that can lose score (active or dormant, unpinned, live)."""
        raise NotImplementedError

    def rules_decay_due(self, step: RuleDecayStep) -> list[Any]:
        """Every rule a pass at step.now would lower: (id, old_score, new_score, old_status,
        new_status, decayed_to) by name. Mirrors engine.lifecycle.decay rule_cycles /
        rule_score_at; status bands from engine.lifecycle.decay.BANDS."""
        raise NotImplementedError

    # -- memories under decay (forecasts) -------------------------------------------------------------
    def memory(self, memory_id: int) -> Any:
        """One memory's whole row (None: none)."""
        raise NotImplementedError

    def crossings_by_kind(self, clock: DecayClock, until: float, agent: str | None) -> dict[str, int]:
        """Decaying memories crossing the threshold by `until`, per kind."""
        raise NotImplementedError

    def crossings(self, clock: DecayClock, until: float, agent: str | None, limit: int) -> list[Any]:
        """Those memories (id, kind, tier, agent, preview (120 chars), s_now, s_then, crosses),
        soonest first."""
        raise NotImplementedError

    def strength_bins(self, clock: DecayClock, bins: int) -> list[tuple[str, int, int]]:
        """(tier, bin, count) of every memory by held strength (core, pinned: their anchor)."""
        raise NotImplementedError

    def below_threshold(self, clock: DecayClock) -> int:
        """Decaying memories whose strength is already under the threshold."""
        raise NotImplementedError

    def crossings_per_day(
        self, clock: DecayClock, until: float, day: float, agent: str | None
    ) -> list[tuple[str, int, int, int]]:
        """(kind, day index from now (overdue: 0), crossings, of which overdue) up to `until`."""
        raise NotImplementedError

    def last_decay_pass(self, key: str) -> float | None:
        """The `now` of the latest decay pass that wrote, as recorded in meta under `key`."""
        raise NotImplementedError

    # -- memories boot and the gates show ------------------------------------------------------------
    def boot_items(self, category: str, agent: str | None, limit: int) -> list[Any]:
        """Live core/active memories of `category` for `agent` (with the shared ones): id,
        category, content, agent, tier; core first, then by importance and recency."""
        raise NotImplementedError

    def state_entries(self, category: str, agent: str | None, limit: int) -> list[Any]:
        """The newest live active memories of `category` (of `agent` when given), whole rows."""
        raise NotImplementedError

    def reinforce_candidates(self, skip_categories: Sequence[str]) -> list[Any]:
        """(id, created_at) of active unpinned memories outside these categories, by id (the demo)."""
        raise NotImplementedError

    # -- flows -----------------------------------------------------------------------------------------
    def flows(
        self,
        *,
        domain: str | None = None,
        agent: str | None = None,
        status: str | None = None,
        for_agent: str | None = None,
    ) -> list[Any]:
        """Whole flow rows passing every given filter, by name; `for_agent`: that agent's flows
        and the shared ones."""
        raise NotImplementedError

    # -- what the adapters implement -----------------------------------------------------------------
    def _rules(self, where: RuleFilter, order: RuleOrderName, limit: int) -> list[Any]:
        raise NotImplementedError

    def _top_rules(self, agent: str | None, statuses: list[str], limit: int) -> list[Any]:
        raise NotImplementedError
