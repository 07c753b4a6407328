"""The decay service (`eng.decay`): the pass (set-based, idempotent, injectable now), forecasts
and curves that write nothing, and the strength distribution and timeline the Decay pane draws.

A pass is a handful of UPDATE statements in one transaction, never a Python loop per row:
  1. schedule: memories that decay but have no archive_at yet (new, reinforced, restored) get it;
  2. archive: decaying memories whose archive_at has passed move to the archived tier;
  3. rules: active/dormant rules unreinforced past the grace lose the daily loss per cycle due.
The partial index on archive_at holds only decaying rows, so steps 1–2 touch only the rows that
change: strength itself is computed on read (engine/decay.py), never rewritten row by row.
Everything is a closed form of the stored anchors, so a second pass at the same clock finds
nothing to do and writes nothing. Which index carries the pass is the storage's business
(`store.decay_access`, engine/storage/lifecycle.py), and so is a burst — many memories crossing at
once after an import of old data or a pause: SQLite then does its per-row trigger work (the vector
index's filter fields, the vector change log) in bulk inside the same transaction.
"""

from __future__ import annotations

from engine.audit import log as audit
from engine.clock import DAY
from engine.context import Context
from engine.errors import InvalidInput, cut
from engine.lifecycle.decay import BANDS, RETIRE_EDGE, STATUS_RANK, clock_for
from engine.lifecycle.decay_forecast import DecayForecasts
from engine.lifecycle.types import (
    DECAY_SCOPES,
    DecayCurve,
    DecayPassResult,
    DecayScope,
    Forecast,
    ForecastTimeline,
    StrengthDistribution,
)
from engine.recalls.checks import mark_due
from engine.storage.gateways.rule_history import RuleChange
from engine.storage.lifecycle import DecayAccess, DecayClock, DecayFilter
from engine.storage.port import Connection
from engine.storage.queries.lifecycle import RuleDecayStep

AUDIT_ID_CAP = 1000  # ids listed in the pass's audit row; counts are always exact
LAST_PASS_KEY = "decay.last_pass_at"
BULK_SCHEDULE = 50_000  # scheduling more rows than this rebuilds the index instead of updating it
AUDIT_FIELDS = (
    "now", "memories_scheduled", "memories_decayed", "memories_archived", "snapshots_refreshed",
    "rules_decayed", "rules_demoted", "rules_retired", "archived_ids", "archived_ids_truncated",
    "demoted_rule_ids", "retired_rule_ids",
)  # fmt: skip
DECAY_REASON = "decay: unreinforced past the grace period"


class Decay:
    """`eng.decay`: the pass, its forecasts and the views the Decay pane draws."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.forecasts = DecayForecasts(ctx)

    @property
    def _access(self) -> DecayAccess:
        """The store's access path to decaying memories (a part of the storage port)."""
        return self.ctx.store.decay_access

    # -- the pass --------------------------------------------------------------------------------------
    def run(
        self,
        now: float | None = None,
        *,
        dry_run: bool = False,
        refresh_snapshots: bool = False,
        scope: DecayScope = "all",
    ) -> DecayPassResult:
        """Apply decay as of `now` (default: the engine clock). `dry_run` counts without writing.

        Strength is computed on read, so the pass only writes rows that change state (archived)
        and new or reinforced rows (scheduled). `refresh_snapshots` also rewrites the stored
        `strength` column of every decaying row that fell by `snapshot_step` — a full scan, for
        readers that use the column directly. `scope`: "all", "memories" or "rules".
        """
        if scope not in DECAY_SCOPES:
            raise InvalidInput(f"scope is all, memories or rules, not {cut(scope)}")
        ctx = self.ctx
        now = ctx.clock.now() if now is None else float(now)
        ds = ctx.settings.decay
        clock = clock_for(ds, now)
        rp = RuleDecayStep(now, DAY, ds.rule_grace_days * DAY, ds.rule_daily_loss, RETIRE_EDGE, BANDS)

        def run(conn: Connection) -> DecayPassResult:
            res = DecayPassResult(now, dry_run, 0, 0, 0, 0, 0, 0)
            if scope != "rules":
                self._decay_memories(conn, clock, ds.snapshot_step, res, dry_run, refresh_snapshots)
            if scope != "memories":
                self._decay_rules(conn, rp, res, dry_run)
            changed = (
                res.memories_archived
                or res.snapshots_refreshed
                or res.rules_decayed
                or res.memories_scheduled
                or res.memories_decayed
            )
            if res.memories_archived and not dry_run:
                mark_due(conn, None)  # retrieval checks: an archive may take a pinned memory out
            if changed and not dry_run:
                audit.append(
                    conn,
                    at=ctx.clock.now(),
                    actor=ctx.actor,
                    action="decay-pass",
                    target_kind="decay",
                    target_id=f"{now:.3f}",
                    summary={"scope": scope, **{k: getattr(res, k) for k in AUDIT_FIELDS}},
                )
            return res

        if dry_run:  # the same counts in a write that rolls back (the store's one dry run)
            return ctx.store.dry_run(run)
        return ctx.store.write(run)

    def _decay_memories(
        self,
        conn: Connection,
        clock: DecayClock,
        step: float,
        res: DecayPassResult,
        dry_run: bool,
        refresh_snapshots: bool,
    ) -> None:
        """Schedule new rows, count the decaying ones, archive those past the threshold."""
        now, access = clock.now, self._access
        res.memories_scheduled = self._schedule(conn, clock, dry_run)
        last = conn.lifecycle_queries.last_decay_pass(LAST_PASS_KEY)
        if last is None or now > last:
            # Every decaying memory lost strength since the previous pass (closed form); a dry
            # run has not scheduled new rows, so theirs count by their computed crossing.
            later = DecayFilter(clock, archive_at="later", estimated=dry_run)
            res.memories_decayed = access.count(conn, "archive_at", later)
        if dry_run:
            ids = access.ids(conn, "planner", DecayFilter(clock, archive_at="due", estimated=True))
            if refresh_snapshots:
                res.snapshots_refreshed = access.count(
                    conn, "scan", DecayFilter(clock, archive_at="later", estimated=True, stale_by=step)
                )
        else:
            ids = access.update_ids(conn, "archive_at", "archive", DecayFilter(clock, archive_at="due"))
            if refresh_snapshots:
                res.snapshots_refreshed = access.update(
                    conn, "scan", "snapshot", DecayFilter(clock, stale_by=step)
                )
            if last is None or now > last:
                conn.meta.put(LAST_PASS_KEY, repr(now))
        ids.sort()
        res.memories_archived = len(ids)
        res.archived_ids = ids[:AUDIT_ID_CAP]
        res.archived_ids_truncated = len(ids) > AUDIT_ID_CAP

    def last_run_at(self) -> float | None:
        """The `now` of the latest decay pass that wrote (None: never)."""
        return self.ctx.store.query(lambda c: c.lifecycle_queries.last_decay_pass(LAST_PASS_KEY))

    def _schedule(self, conn: Connection, clock: DecayClock, dry_run: bool) -> int:
        """Give archive_at to decaying memories that have none (new, reinforced, restored)."""
        access = self._access
        pending = DecayFilter(clock, archive_at="unscheduled")
        n = access.count(conn, "archive_at", pending)
        if dry_run or not n:
            return n
        if n > BULK_SCHEDULE:
            with access.archive_index_dropped(conn) as dropped:
                access.update(conn, "planner" if dropped else "archive_at", "schedule", pending)
        else:
            access.update(conn, "archive_at", "schedule", pending)
        return n

    def _decay_rules(self, conn: Connection, rp: RuleDecayStep, res: DecayPassResult, dry_run: bool) -> None:
        rows = conn.lifecycle_queries.rules_decay_due(rp)
        res.rules_decayed = len(rows)
        for r in rows:
            if r["new_status"] == "retired" and r["old_status"] != "retired":
                res.retired_rule_ids.append(r["id"])
            elif STATUS_RANK[r["new_status"]] < STATUS_RANK[r["old_status"]]:
                res.demoted_rule_ids.append(r["id"])
        res.rules_demoted, res.rules_retired = len(res.demoted_rule_ids), len(res.retired_rule_ids)
        if dry_run or not rows:
            return
        # The update and its history rows come from the same computed set (a few hundred rows a
        # day at most: rules are counted in thousands, not millions).
        now = rp.now
        rows = sorted(rows, key=lambda r: r["id"])
        conn.rules.decay_many(
            [(r["new_score"], r["new_status"], r["decayed_to"], r["id"]) for r in rows], now
        )
        conn.rule_history.record_many(
            (
                RuleChange(
                    rule_id=r["id"],
                    at=now,
                    new_score=r["new_score"],
                    new_status=r["new_status"],
                    reason=DECAY_REASON,
                    actor=self.ctx.actor,
                    old_score=r["old_score"],
                    old_status=r["old_status"],
                )
                for r in rows
            ),
        )

    # -- forecasts (read-only, DecayForecasts) ---------------------------------------------------------
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
        return self.forecasts.forecast(days, now, rates=rates, limit=limit, agent=agent)

    def curve(
        self,
        memory_id: int,
        days: float = 60,
        rates: dict | None = None,
        now: float | None = None,
        points: int = 61,
    ) -> DecayCurve:
        """Projected strength of one memory from `now` over `days` (a what-if with `rates`)."""
        return self.forecasts.curve(memory_id, days, rates, now, points)

    def distribution(self, now: float | None = None, bins: int = 10) -> StrengthDistribution:
        """How many memories of each tier sit in each strength bin right now."""
        return self.forecasts.distribution(now, bins)

    def timeline(
        self, days: int = 30, now: float | None = None, *, rates: dict | None = None, agent: str | None = None
    ) -> ForecastTimeline:
        """Crossings per day and kind over the next `days`, for the Decay pane's chart."""
        return self.forecasts.timeline(days, now, rates=rates, agent=agent)
