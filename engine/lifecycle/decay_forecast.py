"""What decay would do, written nowhere: which memories would be archived and which rules would
change status within some days (optionally with what-if half-lives), one memory's projected
strength, the strength distribution now, and crossings per day for the Decay pane's chart."""

from __future__ import annotations

from engine.clock import DAY
from engine.context import Context
from engine.errors import InvalidInput, NotFound, cut
from engine.lifecycle.decay import (
    STATUS_RANK,
    check_days,
    clock_for,
    crossing_time,
    half_lives_for,
    rates_for,
    rule_score_at,
    strength_at,
)
from engine.lifecycle.types import (
    CurvePoint,
    DecayCurve,
    Forecast,
    ForecastTimeline,
    MemoryForecast,
    RuleForecast,
    StrengthDistribution,
)
from engine.types import KINDS


class DecayForecasts:
    """The read-only side of `eng.decay`, composed by `Decay`."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def forecast(
        self,
        days: float,
        now: float | None = None,
        *,
        rates: dict | None = None,
        limit: int = 200,
        agent: str | None = None,
    ) -> Forecast:
        """Which memories would be archived and which rules would change status within `days`
        if nothing were reinforced. `rates`: a what-if of half-lives in days per kind."""
        days = check_days(days)
        now = self.ctx.clock.now() if now is None else float(now)
        until = now + days * DAY
        ds = self.ctx.settings.decay
        clock = clock_for(ds, now, rates)
        with self.ctx.store.reading() as c:
            q = c.lifecycle_queries
            by_kind = q.crossings_by_kind(clock, until, agent)
            rows = q.crossings(clock, until, agent, int(limit))
            rrows = q.rules_decaying(agent)
        mems = [
            MemoryForecast(
                r["id"],
                r["kind"],
                r["tier"],
                r["agent"],
                " ".join(r["preview"].split()),
                round(r["s_now"], 4),
                round(r["s_then"], 4),
                r["crosses"],
            )
            for r in rows
        ]
        rules = []
        for r in rrows:
            s_now, st_now = rule_score_at(r, now, ds)
            s_then, st_then = rule_score_at(r, until, ds)
            if st_then != st_now:
                rules.append(RuleForecast(r["id"], r["text"], r["agent"], s_now, s_then, st_now, st_then))
        rules.sort(key=lambda f: (STATUS_RANK[f.status_then], f.score_then, f.id))
        return Forecast(
            now,
            until,
            days,
            sum(by_kind.values()),
            mems,
            rules,
            by_kind,
            half_lives_for(ds, rates) if rates else None,
        )

    def curve(
        self,
        memory_id: int,
        days: float = 60,
        rates: dict | None = None,
        now: float | None = None,
        points: int = 61,
    ) -> DecayCurve:
        """Projected strength of one memory from `now` over `days` (a what-if with `rates`)."""
        days = check_days(days)
        now = self.ctx.clock.now() if now is None else float(now)
        ds = self.ctx.settings.decay
        mid = int(memory_id)
        r = self.ctx.store.query(lambda c: c.lifecycle_queries.memory(mid))
        if r is None:
            raise NotFound(f"no memory with id {memory_id}")
        rate = rates_for(ds, rates)[r["kind"]]
        frozen = bool(r["pinned"]) or r["tier"] == "core"
        anchor, lrt = float(r["anchor_strength"]), float(r["last_reinforced_at"])
        n = max(2, int(points))
        pts = []
        for i in range(n):
            d = days * i / (n - 1)
            v = anchor if frozen else strength_at(anchor, lrt, rate, now + d * DAY)
            pts.append(CurvePoint(round(d, 4), now + d * DAY, round(v, 6)))
        cross = None if frozen else crossing_time(anchor, lrt, rate, ds.archive_threshold)
        if cross is not None and cross > now + days * DAY:
            cross = None
        return DecayCurve(
            "memory",
            r["id"],
            r["kind"],
            ds.archive_threshold,
            frozen,
            cross,
            pts,
            half_lives_for(ds, rates) if rates else None,
        )

    def distribution(self, now: float | None = None, bins: int = 10) -> StrengthDistribution:
        """How many memories of each tier sit in each strength bin right now."""
        now = self.ctx.clock.now() if now is None else float(now)
        bins = max(1, min(100, int(bins)))
        ds = self.ctx.settings.decay
        clock = clock_for(ds, now)
        counts = {t: [0] * bins for t in ("core", "active", "archived")}
        with self.ctx.store.reading() as c:
            for tier, b, n in c.lifecycle_queries.strength_bins(clock, bins):
                counts.setdefault(tier, [0] * bins)[max(0, int(b))] += n
            below = c.lifecycle_queries.below_threshold(clock)
        return StrengthDistribution(now, [i / bins for i in range(bins + 1)], counts, {"active": below})

    def timeline(
        self, days: int = 30, now: float | None = None, *, rates: dict | None = None, agent: str | None = None
    ) -> ForecastTimeline:
        """Crossings per day and kind over the next `days` (one GROUP BY, any table size), for the
        Decay pane's chart. `rates`: a what-if of half-lives in days per kind; nothing is written."""
        try:
            n = int(days)
        except (TypeError, ValueError):
            raise InvalidInput(f"days must be a whole number, not {cut(days)}") from None
        if not 1 <= n <= 3650:
            raise InvalidInput(f"days must be between 1 and 3650, not {n}")
        now = self.ctx.clock.now() if now is None else float(now)
        ds = self.ctx.settings.decay
        clock = clock_for(ds, now, rates)
        counts = {k: [0] * n for k in KINDS}
        overdue = 0
        with self.ctx.store.reading() as c:
            for kind, d, cnt, late in c.lifecycle_queries.crossings_per_day(clock, now + n * DAY, DAY, agent):
                counts.setdefault(kind, [0] * n)[min(n - 1, int(d))] += cnt
                overdue += late or 0
        per_day = [sum(counts[k][i] for k in counts) for i in range(n)]
        cumulative, total = [], 0
        for v in per_day:
            total += v
            cumulative.append(total)
        return ForecastTimeline(
            now, n, counts, overdue, total, half_lives_for(ds, rates) if rates else None, cumulative
        )
