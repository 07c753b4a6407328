"""DecayMixin: the decay pass (set-based, idempotent, injectable now), forecasts and curves that
write nothing, and the strength distribution the Decay pane draws.

A pass is a handful of UPDATE statements in one transaction, never a Python loop per row:
  1. schedule: memories that decay but have no archive_at yet (new, reinforced, restored) get it;
  2. archive: decaying memories whose archive_at has passed move to the archived tier;
  3. rules: active/dormant rules unreinforced past the grace lose the daily loss per cycle due.
The partial index on archive_at holds only decaying rows, so steps 1–2 touch only the rows that
change: strength itself is computed on read (current_strength), never rewritten row by row.
Everything is a closed form of the stored anchors, so a second pass at the same clock finds
nothing to do and writes nothing.
"""
from __future__ import annotations

from . import audit
from .clock import DAY
from .decay import (RETIRE_EDGE, STATUS_RANK, band, crossing_sql, crossing_time, half_lives_for,
                    held_strength_sql, rate_params, rates_for, rule_decay_sql, rule_score_at,
                    strength_at, strength_sql)
from .errors import InvalidInput, NotFound
from .lifecycle_types import (CurvePoint, DecayCurve, DecayPassResult, Forecast, MemoryForecast,
                              RuleForecast, StrengthDistribution)

AUDIT_ID_CAP = 1000           # ids listed in the pass's audit row; counts are always exact
LAST_PASS_KEY = "decay.last_pass_at"
BULK_SCHEDULE = 50_000        # scheduling more rows than this rebuilds the index instead of updating it
DECAYING = "tier = 'active' AND pinned = 0"
# Without ANALYZE statistics the planner prefers memories_tier and walks every active row.
BY_ARCHIVE_AT = "INDEXED BY memories_archive_at"


def _days(days) -> float:
    try:
        d = float(days)
    except (TypeError, ValueError):
        raise InvalidInput(f"days must be a number, not {days!r}") from None
    if not 0 < d <= 3650:
        raise InvalidInput(f"days must be more than 0 and at most 3650, not {d:g}")
    return d


class DecayMixin:
    # -- the pass --------------------------------------------------------------------------------------
    def decay_pass(self, now: float | None = None, *, dry_run: bool = False,
                   refresh_snapshots: bool = False, scope: str = "all") -> DecayPassResult:
        """Apply decay as of `now` (default: the engine clock). `dry_run` counts without writing.

        Strength is computed on read, so the pass only writes rows that change state (archived)
        and new or reinforced rows (scheduled). `refresh_snapshots` also rewrites the stored
        `strength` column of every decaying row that fell by `snapshot_step` — a full scan, for
        readers that use the column directly. `scope`: "all", "memories" or "rules".
        """
        if scope not in ("all", "memories", "rules"):
            raise InvalidInput(f"scope is all, memories or rules, not {scope!r}")
        now = self.clock.now() if now is None else float(now)
        ds = self.settings.decay
        p = {"now": now, "thr": ds.archive_threshold, "step": ds.snapshot_step,
             **rate_params(rates_for(ds))}
        rp = {"now": now, "day": DAY, "grace": ds.rule_grace_days * DAY, "loss": ds.rule_daily_loss,
              "edge": RETIRE_EDGE}

        def run(conn) -> DecayPassResult:
            res = DecayPassResult(now, dry_run, 0, 0, 0, 0, 0, 0)
            if scope != "rules":
                self._decay_memories(conn, p, res, dry_run, refresh_snapshots)
            if scope != "memories":
                self._decay_rules(conn, rp, res, dry_run)
            changed = (res.memories_archived or res.snapshots_refreshed or res.rules_decayed
                       or res.memories_scheduled or res.memories_decayed)
            if changed and not dry_run:
                audit.append(conn, at=self.clock.now(), actor=self.actor, action="decay-pass",
                             target_kind="decay", target_id=f"{now:.3f}",
                             summary={"scope": scope, **{k: getattr(res, k) for k in (
                                 "now", "memories_scheduled", "memories_decayed", "memories_archived",
                                 "snapshots_refreshed", "rules_decayed", "rules_demoted",
                                 "rules_retired", "archived_ids", "archived_ids_truncated",
                                 "demoted_rule_ids", "retired_rule_ids")}})
            return res

        if dry_run:
            with self.store.reading() as conn:
                return run(conn)
        return self.store.write(run)

    def _decay_memories(self, conn, p: dict, res: DecayPassResult, dry_run: bool,
                        refresh_snapshots: bool) -> None:
        """Schedule new rows, count the decaying ones, archive those past the threshold."""
        now = p["now"]
        res.memories_scheduled = self._schedule(conn, p, dry_run)
        last = conn.execute("SELECT value FROM meta WHERE key = ?", (LAST_PASS_KEY,)).fetchone()
        last = float(last[0]) if last else None
        if last is None or now > last:
            # Every decaying memory lost strength since the previous pass (closed form).
            later = "archive_at > :now" + (   # a dry run has not scheduled new rows
                f" OR (archive_at IS NULL AND {crossing_sql()} > :now)" if dry_run else "")
            res.memories_decayed = conn.execute(
                f"SELECT count(*) FROM memories {BY_ARCHIVE_AT} WHERE ({later})"
                f" AND {DECAYING}", p).fetchone()[0]
        if dry_run:
            ids = [r[0] for r in conn.execute(
                f"SELECT id FROM memories WHERE {DECAYING} AND coalesce(archive_at, "
                f"{crossing_sql()}) <= :now ORDER BY id", p)]
            if refresh_snapshots:
                res.snapshots_refreshed = conn.execute(
                    f"SELECT count(*) FROM memories NOT INDEXED WHERE {DECAYING} AND coalesce("
                    f"archive_at, {crossing_sql()}) > :now AND strength - {strength_sql()} >= :step",
                    p).fetchone()[0]
        else:
            ids = [r[0] for r in conn.execute(
                f"UPDATE memories {BY_ARCHIVE_AT} SET tier = 'archived', strength = {strength_sql()},"
                f" updated_at = :now WHERE archive_at <= :now AND {DECAYING} RETURNING id", p)]
            if refresh_snapshots:
                res.snapshots_refreshed = conn.execute(
                    f"UPDATE memories NOT INDEXED SET strength = {strength_sql()} WHERE {DECAYING}"
                    f" AND strength - {strength_sql()} >= :step", p).rowcount
            if last is None or now > last:
                conn.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE"
                             " SET value = excluded.value", (LAST_PASS_KEY, repr(now)))
        ids.sort()
        res.memories_archived = len(ids)
        res.archived_ids = ids[:AUDIT_ID_CAP]
        res.archived_ids_truncated = len(ids) > AUDIT_ID_CAP

    def last_decay_pass_at(self) -> float | None:
        """The `now` of the latest decay pass that wrote (None: never)."""
        r = self.store.read_one("SELECT value FROM meta WHERE key = ?", (LAST_PASS_KEY,))
        return float(r[0]) if r else None

    def _decay_restart(self, memory_id: int) -> dict:
        """Column changes that make a memory decay from now (unpinned, restored, out of core).

        It keeps the strength it holds now; a memory restored from the archive is lifted to the
        threshold plus one reinforcement, so the next pass does not archive it straight back.
        """
        r = self.store.read_one("SELECT * FROM memories WHERE id = ?", (int(memory_id),))
        if r is None:
            return {}
        now = self.clock.now()
        held = self.current_strength(r, now)
        if r["tier"] == "archived":
            ds = self.settings.decay
            held = min(1.0, max(held, ds.archive_threshold) + ds.reinforce_boost)
        return {"anchor_strength": held, "strength": held, "last_reinforced_at": now, "archive_at": None}

    def _schedule(self, conn, p: dict, dry_run: bool) -> int:
        """Give archive_at to decaying memories that have none (new, reinforced, restored)."""
        pending = f"archive_at IS NULL AND {DECAYING}"
        n = conn.execute(f"SELECT count(*) FROM memories {BY_ARCHIVE_AT} WHERE {pending}").fetchone()[0]
        if dry_run or not n:
            return n
        # Updating a big index row by row in random key order costs far more than sorting it once.
        bulk = n > BULK_SCHEDULE
        if bulk:
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND "
                               "name = 'memories_archive_at'").fetchone()
            bulk = sql is not None
        if bulk:
            conn.execute("DROP INDEX memories_archive_at")
        conn.execute(f"UPDATE memories {'' if bulk else BY_ARCHIVE_AT} SET archive_at = {crossing_sql()}"
                     f" WHERE {pending}", p)
        if bulk:
            conn.execute(sql[0])
        return n

    def _decay_rules(self, conn, rp: dict, res: DecayPassResult, dry_run: bool) -> None:
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
        # One statement each for the update and its history rows, from the same computed set.
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS rule_decay_batch (id INTEGER PRIMARY KEY,"
                     " old_score REAL, new_score REAL, old_status TEXT, new_status TEXT,"
                     " decayed_to REAL)")
        conn.execute("DELETE FROM temp.rule_decay_batch")
        conn.execute(f"INSERT INTO temp.rule_decay_batch {rule_decay_sql()}", rp)
        conn.execute("UPDATE rules SET score = b.new_score, status = b.new_status,"
                     " last_decayed_at = b.decayed_to, updated_at = :now"
                     " FROM temp.rule_decay_batch AS b WHERE rules.id = b.id", rp)
        conn.execute("INSERT INTO rule_history(rule_id, at, old_score, new_score, old_status,"
                     " new_status, reason, actor) SELECT id, :now, old_score, new_score, old_status,"
                     " new_status, 'decay: unreinforced past the grace period', :actor"
                     " FROM temp.rule_decay_batch", {**rp, "actor": self.actor})
        conn.execute("DELETE FROM temp.rule_decay_batch")

    # -- forecasts (read-only) -------------------------------------------------------------------------
    def forecast(self, days: float, now: float | None = None, *, rates: dict | None = None,
                 limit: int = 200, agent: str | None = None) -> Forecast:
        """Which memories would be archived and which rules would change status within `days`
        if nothing were reinforced. `rates`: a what-if of half-lives in days per kind."""
        days = _days(days)
        now = self.clock.now() if now is None else float(now)
        until = now + days * DAY
        ds = self.settings.decay
        p = {"now": now, "until": until, "thr": ds.archive_threshold,
             **rate_params(rates_for(ds, rates))}
        where = f"{DECAYING} AND {crossing_sql()} <= :until"
        if agent is not None:
            where += " AND agent = :agent"
            p["agent"] = agent
        with self.store.reading() as c:
            by_kind = {k: n for k, n in c.execute(
                f"SELECT kind, count(*) FROM memories WHERE {where} GROUP BY kind", p)}
            rows = c.execute(
                f"SELECT id, kind, tier, agent, substr(content, 1, 120) AS preview,"
                f" {strength_sql()} AS s_now, {strength_sql(':until')} AS s_then,"
                f" {crossing_sql()} AS crosses FROM memories WHERE {where}"
                f" ORDER BY crosses, id LIMIT :limit", {**p, "limit": int(limit)}).fetchall()
            rrows = c.execute("SELECT * FROM rules WHERE status IN ('active', 'dormant')"
                              " AND pinned = 0 AND absorbed_into IS NULL"
                              + (" AND agent = :agent" if agent is not None else ""), p).fetchall()
        mems = [MemoryForecast(r["id"], r["kind"], r["tier"], r["agent"], " ".join(r["preview"].split()),
                               round(r["s_now"], 4), round(r["s_then"], 4), r["crosses"]) for r in rows]
        rules = []
        for r in rrows:
            s_now, st_now = rule_score_at(r, now, ds)
            s_then, st_then = rule_score_at(r, until, ds)
            if st_then != st_now:
                rules.append(RuleForecast(r["id"], r["text"], r["agent"], s_now, s_then, st_now, st_then))
        rules.sort(key=lambda f: (STATUS_RANK[f.status_then], f.score_then, f.id))
        return Forecast(now, until, days, sum(by_kind.values()), mems, rules, by_kind,
                        half_lives_for(ds, rates) if rates else None)

    def decay_curve(self, memory_id: int, days: float = 60, rates: dict | None = None,
                    now: float | None = None, points: int = 61) -> DecayCurve:
        """Projected strength of one memory from `now` over `days` (a what-if with `rates`)."""
        days = _days(days)
        now = self.clock.now() if now is None else float(now)
        ds = self.settings.decay
        r = self.store.read_one("SELECT * FROM memories WHERE id = ?", (int(memory_id),))
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
        return DecayCurve("memory", r["id"], r["kind"], ds.archive_threshold, frozen, cross, pts,
                          half_lives_for(ds, rates) if rates else None)

    def rule_curve(self, rule_id: int, days: float = 30, now: float | None = None) -> DecayCurve:
        """Projected score of one rule, one point per day, if nothing reinforces it."""
        days = _days(days)
        now = self.clock.now() if now is None else float(now)
        ds = self.settings.decay
        r = self.store.read_one("SELECT * FROM rules WHERE id = ?", (int(rule_id),))
        if r is None:
            raise NotFound(f"no rule with id {rule_id}")
        pts, cross = [], None
        for d in range(int(days) + 1):
            s, st = rule_score_at(r, now + d * DAY, ds)
            pts.append(CurvePoint(float(d), now + d * DAY, s))
            if cross is None and st == "retired" and r["status"] != "retired":
                cross = now + d * DAY
        frozen = band(float(r["score"])) == "critical" or bool(r["pinned"]) or r["status"] == "retired"
        return DecayCurve("rule", r["id"], r["status"], 3.0, frozen, cross, pts)

    def strength_distribution(self, now: float | None = None, bins: int = 10) -> StrengthDistribution:
        """How many memories of each tier sit in each strength bin right now."""
        now = self.clock.now() if now is None else float(now)
        bins = max(1, min(100, int(bins)))
        ds = self.settings.decay
        p = {"now": now, "bins": bins, "thr": ds.archive_threshold, **rate_params(rates_for(ds))}
        counts = {t: [0] * bins for t in ("core", "active", "archived")}
        with self.store.reading() as c:
            for tier, b, n in c.execute(
                    f"SELECT tier, min(:bins - 1, CAST({held_strength_sql()} * :bins AS INTEGER)) AS b,"
                    f" count(*) FROM memories GROUP BY tier, b", p):
                counts.setdefault(tier, [0] * bins)[max(0, int(b))] += n
            below = c.execute(f"SELECT count(*) FROM memories WHERE {DECAYING} AND "
                              f"{strength_sql()} < :thr", p).fetchone()[0]
        return StrengthDistribution(now, [i / bins for i in range(bins + 1)], counts,
                                    {"active": below})
