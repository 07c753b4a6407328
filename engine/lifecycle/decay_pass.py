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
(`store.decay_access`, engine/storage/lifecycle.py).
"""

from __future__ import annotations

from typing import Any

from engine.audit import log as audit
from engine.clock import DAY
from engine.context import Context
from engine.errors import InvalidInput, NotFound
from engine.lifecycle.decay import (
    RETIRE_EDGE,
    STATUS_RANK,
    check_days,
    crossing_sql,
    crossing_time,
    half_lives_for,
    held_strength_sql,
    rate_params,
    rates_for,
    rule_decay_sql,
    rule_score_at,
    strength_at,
    strength_sql,
)
from engine.lifecycle.types import (
    DECAY_SCOPES,
    CurvePoint,
    DecayCurve,
    DecayPassResult,
    DecayScope,
    Forecast,
    ForecastTimeline,
    MemoryForecast,
    RuleForecast,
    StrengthDistribution,
)
from engine.storage.lifecycle import DecayAccess
from engine.tables import rule_history
from engine.types import KINDS

AUDIT_ID_CAP = 1000  # ids listed in the pass's audit row; counts are always exact
LAST_PASS_KEY = "decay.last_pass_at"
BULK_SCHEDULE = 50_000  # scheduling more rows than this rebuilds the index instead of updating it
DECAYING = "tier = 'active' AND pinned = 0"  # the rows a decay pass can archive
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
            raise InvalidInput(f"scope is all, memories or rules, not {scope!r}")
        ctx = self.ctx
        now = ctx.clock.now() if now is None else float(now)
        ds = ctx.settings.decay
        p = {"now": now, "thr": ds.archive_threshold, "step": ds.snapshot_step, **rate_params(rates_for(ds))}
        rp = {
            "now": now,
            "day": DAY,
            "grace": ds.rule_grace_days * DAY,
            "loss": ds.rule_daily_loss,
            "edge": RETIRE_EDGE,
        }

        def run(conn: Any) -> DecayPassResult:
            res = DecayPassResult(now, dry_run, 0, 0, 0, 0, 0, 0)
            if scope != "rules":
                self._decay_memories(conn, p, res, dry_run, refresh_snapshots)
            if scope != "memories":
                self._decay_rules(conn, rp, res, dry_run)
            changed = (
                res.memories_archived
                or res.snapshots_refreshed
                or res.rules_decayed
                or res.memories_scheduled
                or res.memories_decayed
            )
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
        self, conn: Any, p: dict, res: DecayPassResult, dry_run: bool, refresh_snapshots: bool
    ) -> None:
        """Schedule new rows, count the decaying ones, archive those past the threshold."""
        now, access = p["now"], self._access
        res.memories_scheduled = self._schedule(conn, p, dry_run)
        last_row = conn.execute("SELECT value FROM meta WHERE key = ?", (LAST_PASS_KEY,)).fetchone()
        last = float(last_row[0]) if last_row else None
        if last is None or now > last:
            # Every decaying memory lost strength since the previous pass (closed form).
            later = "archive_at > :now" + (  # a dry run has not scheduled new rows
                f" OR (archive_at IS NULL AND {crossing_sql()} > :now)" if dry_run else ""
            )
            res.memories_decayed = access.count(conn, "archive_at", f"({later}) AND {DECAYING}", p)
        if dry_run:
            ids = [
                r[0]
                for r in conn.execute(
                    f"SELECT id FROM memories WHERE {DECAYING} AND coalesce(archive_at, "
                    f"{crossing_sql()}) <= :now ORDER BY id",
                    p,
                )
            ]
            if refresh_snapshots:
                res.snapshots_refreshed = access.count(
                    conn,
                    "scan",
                    f"{DECAYING} AND coalesce(archive_at, {crossing_sql()}) > :now"
                    f" AND strength - {strength_sql()} >= :step",
                    p,
                )
        else:
            ids = access.update_ids(
                conn,
                "archive_at",
                f"tier = 'archived', strength = {strength_sql()}, updated_at = :now",
                f"archive_at <= :now AND {DECAYING}",
                p,
            )
            if refresh_snapshots:
                res.snapshots_refreshed = access.update(
                    conn,
                    "scan",
                    f"strength = {strength_sql()}",
                    f"{DECAYING} AND strength - {strength_sql()} >= :step",
                    p,
                )
            if last is None or now > last:
                conn.execute(
                    "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                    " SET value = excluded.value",
                    (LAST_PASS_KEY, repr(now)),
                )
        ids.sort()
        res.memories_archived = len(ids)
        res.archived_ids = ids[:AUDIT_ID_CAP]
        res.archived_ids_truncated = len(ids) > AUDIT_ID_CAP

    def last_run_at(self) -> float | None:
        """The `now` of the latest decay pass that wrote (None: never)."""
        r = self.ctx.store.read_one("SELECT value FROM meta WHERE key = ?", (LAST_PASS_KEY,))
        return float(r[0]) if r else None

    def _schedule(self, conn: Any, p: dict, dry_run: bool) -> int:
        """Give archive_at to decaying memories that have none (new, reinforced, restored)."""
        access = self._access
        pending = f"archive_at IS NULL AND {DECAYING}"
        n = access.count(conn, "archive_at", pending, {})
        if dry_run or not n:
            return n
        assignment = f"archive_at = {crossing_sql()}"
        if n > BULK_SCHEDULE:
            with access.archive_index_dropped(conn) as dropped:
                access.update(conn, "planner" if dropped else "archive_at", assignment, pending, p)
        else:
            access.update(conn, "archive_at", assignment, pending, p)
        return n

    def _decay_rules(self, conn: Any, rp: dict, res: DecayPassResult, dry_run: bool) -> None:
        rows = conn.execute(rule_decay_sql(), rp).fetchall()
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
        now = rp["now"]
        rows = sorted(rows, key=lambda r: r["id"])
        conn.executemany(
            "UPDATE rules SET score = ?, status = ?, last_decayed_at = ?, updated_at = ? WHERE id = ?",
            [(r["new_score"], r["new_status"], r["decayed_to"], now, r["id"]) for r in rows],
        )
        rule_history.record_many(
            conn,
            (
                rule_history.RuleChange(
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

    # -- forecasts (read-only) -------------------------------------------------------------------------
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
        p: dict[str, Any] = {
            "now": now,
            "until": until,
            "thr": ds.archive_threshold,
            **rate_params(rates_for(ds, rates)),
        }
        where = f"{DECAYING} AND {crossing_sql()} <= :until"
        if agent is not None:
            where += " AND agent = :agent"
            p["agent"] = agent
        with self.ctx.store.reading() as c:
            by_kind = {
                k: n
                for k, n in c.execute(f"SELECT kind, count(*) FROM memories WHERE {where} GROUP BY kind", p)
            }
            rows = c.execute(
                f"SELECT id, kind, tier, agent, substr(content, 1, 120) AS preview,"
                f" {strength_sql()} AS s_now, {strength_sql(':until')} AS s_then,"
                f" {crossing_sql()} AS crosses FROM memories WHERE {where}"
                f" ORDER BY crosses, id LIMIT :limit",
                {**p, "limit": int(limit)},
            ).fetchall()
            rrows = c.execute(
                "SELECT * FROM rules WHERE status IN ('active', 'dormant')"
                " AND pinned = 0 AND absorbed_into IS NULL"
                + (" AND agent = :agent" if agent is not None else ""),
                p,
            ).fetchall()
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
        r = self.ctx.store.read_one("SELECT * FROM memories WHERE id = ?", (int(memory_id),))
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
        p = {"now": now, "bins": bins, "thr": ds.archive_threshold, **rate_params(rates_for(ds))}
        counts = {t: [0] * bins for t in ("core", "active", "archived")}
        with self.ctx.store.reading() as c:
            for tier, b, n in c.execute(
                f"SELECT tier, min(:bins - 1, CAST({held_strength_sql()} * :bins AS INTEGER)) AS b,"
                f" count(*) FROM memories GROUP BY tier, b",
                p,
            ):
                counts.setdefault(tier, [0] * bins)[max(0, int(b))] += n
            below = c.execute(
                f"SELECT count(*) FROM memories WHERE {DECAYING} AND {strength_sql()} < :thr", p
            ).fetchone()[0]
        return StrengthDistribution(now, [i / bins for i in range(bins + 1)], counts, {"active": below})

    def timeline(
        self, days: int = 30, now: float | None = None, *, rates: dict | None = None, agent: str | None = None
    ) -> ForecastTimeline:
        """Crossings per day and kind over the next `days` (one GROUP BY, any table size), for the
        Decay pane's chart. `rates`: a what-if of half-lives in days per kind; nothing is written."""
        try:
            n = int(days)
        except (TypeError, ValueError):
            raise InvalidInput(f"days must be a whole number, not {days!r}") from None
        if not 1 <= n <= 3650:
            raise InvalidInput(f"days must be between 1 and 3650, not {n}")
        now = self.ctx.clock.now() if now is None else float(now)
        ds = self.ctx.settings.decay
        p: dict[str, Any] = {
            "now": now,
            "until": now + n * DAY,
            "day": DAY,
            "thr": ds.archive_threshold,
            **rate_params(rates_for(ds, rates)),
        }
        agent_sql = " AND agent = :agent" if agent is not None else ""
        if agent is not None:
            p["agent"] = agent
        counts = {k: [0] * n for k in KINDS}
        overdue = 0
        # The crossing is computed once per row in the inner query; one pass yields both the
        # per-day counts and the overdue ones.
        sql = (
            f"SELECT kind, CAST(max(0.0, c - :now) / :day AS INTEGER) AS d, count(*),"
            f" sum(c <= :now) FROM (SELECT kind, {crossing_sql()} AS c FROM memories"
            f" WHERE {DECAYING}{agent_sql}) WHERE c <= :until GROUP BY kind, d"
        )
        with self.ctx.store.reading() as c:
            for kind, d, cnt, late in c.execute(sql, p):
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
