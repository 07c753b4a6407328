"""LifecycleViewsMixin: read-only views the console's Rules, Flows and Decay panes need on top of
the lifecycle API (engine/rules.py, flows.py, decay_pass.py): the values their filters offer, and
the day-by-day forecast the Decay pane charts. Writes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .clock import DAY
from .decay import crossing_sql, half_lives_for, rate_params, rates_for
from .errors import InvalidInput
from .types import KINDS

DECAYING = "tier = 'active' AND pinned = 0"     # the rows a decay pass can archive


@dataclass
class RuleFacets:
    """What the Rules pane's filters offer: every domain and agent a rule has ('' = global)."""
    domains: list[str]
    agents: list[str]
    boot_agents: list[str]          # agents with rules or memories (the boot preview's choices)
    total: int                      # rules (absorbed ones excluded)


@dataclass
class ForecastTimeline:
    """Memories that cross the archive threshold on each day of the next `days` if nothing is
    reinforced: counts[kind][i] cross during day i (day 0 also holds those already under it,
    which the next pass archives)."""
    now: float
    days: int
    counts: dict[str, list[int]]
    overdue: int                    # already under the threshold at `now`
    total: int
    rates: dict | None = None       # half-lives used, when a what-if overrode them
    cumulative: list[int] = field(default_factory=list)   # archived by the end of day i


class LifecycleViewsMixin:
    def rule_facets(self) -> RuleFacets:
        with self.store.reading() as c:
            domains = [r[0] for r in c.execute(
                "SELECT DISTINCT domain FROM rules WHERE absorbed_into IS NULL ORDER BY domain")]
            agents = [r[0] for r in c.execute(
                "SELECT DISTINCT agent FROM rules WHERE absorbed_into IS NULL ORDER BY agent")]
            mem_agents = [r[0] for r in c.execute(
                "SELECT DISTINCT agent FROM memories WHERE agent != '' ORDER BY agent")]
            total = c.execute("SELECT count(*) FROM rules WHERE absorbed_into IS NULL").fetchone()[0]
        boot = sorted({a for a in agents + mem_agents if a})
        return RuleFacets(domains, agents, boot, total)

    def forecast_timeline(self, days: int = 30, now: float | None = None, *,
                          rates: dict | None = None, agent: str | None = None) -> ForecastTimeline:
        """Crossings per day and kind over the next `days` (one GROUP BY, any table size).
        `rates`: a what-if of half-lives in days per kind; nothing is written."""
        try:
            n = int(days)
        except (TypeError, ValueError):
            raise InvalidInput(f"days must be a whole number, not {days!r}") from None
        if not 1 <= n <= 3650:
            raise InvalidInput(f"days must be between 1 and 3650, not {n}")
        now = self.clock.now() if now is None else float(now)
        ds = self.settings.decay
        p = {"now": now, "until": now + n * DAY, "day": DAY, "thr": ds.archive_threshold,
             **rate_params(rates_for(ds, rates))}
        agent_sql = " AND agent = :agent" if agent is not None else ""
        if agent is not None:
            p["agent"] = agent
        counts = {k: [0] * n for k in KINDS}
        overdue = 0
        # The crossing is computed once per row in the inner query; one pass yields both the
        # per-day counts and the overdue ones.
        sql = (f"SELECT kind, CAST(max(0.0, c - :now) / :day AS INTEGER) AS d, count(*),"
               f" sum(c <= :now) FROM (SELECT kind, {crossing_sql()} AS c FROM memories"
               f" WHERE {DECAYING}{agent_sql}) WHERE c <= :until GROUP BY kind, d")
        with self.store.reading() as c:
            for kind, d, cnt, late in c.execute(sql, p):
                counts.setdefault(kind, [0] * n)[min(n - 1, int(d))] += cnt
                overdue += late or 0
        per_day = [sum(counts[k][i] for k in counts) for i in range(n)]
        cumulative, run = [], 0
        for v in per_day:
            run += v
            cumulative.append(run)
        return ForecastTimeline(now, n, counts, overdue, run,
                                half_lives_for(ds, rates) if rates else None, cumulative)
