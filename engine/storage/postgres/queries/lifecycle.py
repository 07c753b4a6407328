"""Lifecycle read model in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.lifecycle import DecayClock
from engine.storage.postgres.decay import (
    DECAYING,
    clock_params,
    crossing_sql,
    held_strength_sql,
    strength_sql,
)
from engine.storage.queries.lifecycle import LifecycleQueries, RuleDecayStep, RuleFilter, RuleOrderName

_ORDERS: dict[str, str] = {
    "score": "score DESC, id",
    "recent": "coalesce(last_reinforced_at, created_at) DESC, id",
    "created": "created_at DESC, id",
    "violations": "violations DESC, score DESC, id",
    "id": "id",
}
_LIVE = "absorbed_into IS NULL"


def band_sql(expr: str, bands: Sequence[tuple[float, str]]) -> str:
    """The status bands as an SQL CASE over an expression (built from constants, never input)."""
    whens = " ".join(f"WHEN {expr} >= {float(edge)!r} THEN '{status}'" for edge, status in bands)
    return f"CASE {whens} ELSE 'retired' END"


class PgLifecycleQueries(LifecycleQueries):
    # -- rules -----------------------------------------------------------------------------------------
    def _rules(self, where: RuleFilter, order: RuleOrderName, limit: int) -> list[Any]:
        terms: list[str] = ["TRUE"]
        params: list[Any] = []
        if where.statuses:
            terms.append("status = ANY(%s)")
            params.append(list(where.statuses))
        if where.agent is not None:
            terms.append("(agent = %s OR agent = '')" if where.include_global else "agent = %s")
            params.append(where.agent)
        for col, val in (("domain", where.domain), ("source", where.source)):
            if val is not None:
                terms.append(f"{col} = %s")
                params.append(val)
        if where.min_score is not None:
            terms.append("score >= %s")
            params.append(float(where.min_score))
        if where.max_score is not None:
            terms.append("score <= %s")
            params.append(float(where.max_score))
        if where.pinned is not None:
            terms.append("pinned = %s")
            params.append(1 if where.pinned else 0)
        if not where.include_absorbed:
            terms.append(_LIVE)
        if where.like is not None:
            # SQLite's LIKE (ASCII case-insensitive) is ILIKE here; `\` escapes as there.
            terms.append("(" + " OR ".join("text ILIKE %s ESCAPE '\\'" for _ in where.like) + ")")
            params += list(where.like)
        if where.ids is not None:
            terms.append("id = ANY(%s)")
            params.append([int(i) for i in where.ids])
        return list(
            self.conn.execute(
                f"SELECT * FROM rules WHERE {' AND '.join(terms)} ORDER BY {_ORDERS[order]} LIMIT %s",
                [*params, limit],
            ).fetchall()
        )

    def rule_counts(self, agent: str | None = None) -> dict[str, int]:
        sql = f"SELECT status, count(*) FROM rules WHERE {_LIVE}"
        if agent is not None:
            rows = self.conn.execute(sql + " AND agent = %s GROUP BY status", (agent,))
        else:
            rows = self.conn.execute(sql + " GROUP BY status")
        return {r[0]: int(r[1]) for r in rows}

    def rule_facets(self) -> tuple[list[str], list[str], list[str], int]:
        c = self.conn
        domains = [
            r[0] for r in c.execute(f"SELECT DISTINCT domain FROM rules WHERE {_LIVE} ORDER BY domain")
        ]
        agents = [r[0] for r in c.execute(f"SELECT DISTINCT agent FROM rules WHERE {_LIVE} ORDER BY agent")]
        mem_agents = [
            r[0] for r in c.execute("SELECT DISTINCT agent FROM memories WHERE agent <> '' ORDER BY agent")
        ]
        total = int(c.execute(f"SELECT count(*) FROM rules WHERE {_LIVE}").fetchone()[0])
        return domains, agents, mem_agents, total

    def _top_rules(self, agent: str | None, statuses: list[str], limit: int) -> list[Any]:
        terms = ["status = ANY(%s)", _LIVE]
        params: list[Any] = [statuses]
        if agent:
            terms.append("(agent = %s OR agent = '')")
            params.append(agent)
        return list(
            self.conn.execute(
                f"SELECT * FROM rules WHERE {' AND '.join(terms)} ORDER BY score DESC, "
                f"coalesce(last_reinforced_at, created_at) DESC, id LIMIT %s",
                [*params, limit],
            ).fetchall()
        )

    def rules_decaying(self, agent: str | None = None) -> list[Any]:
        sql = f"SELECT * FROM rules WHERE status IN ('active', 'dormant') AND pinned = 0 AND {_LIVE}"
        if agent is not None:
            return list(self.conn.execute(sql + " AND agent = %s", (agent,)).fetchall())
        return list(self.conn.execute(sql).fetchall())

    def rules_decay_due(self, step: RuleDecayStep) -> list[Any]:
        # score, created_at are NOT NULL and j1, j0 never NULL: greatest/least agree with
        # SQLite's scalar max/min here.
        new_score = (
            "greatest(0.0, score - %(loss)s * least(j1 - j0,"
            " greatest(1, floor((score - %(edge)s) / %(loss)s) + 1)))"
        )
        sql = f"""
            SELECT id, score AS old_score, {new_score} AS new_score, status AS old_status,
                   {band_sql(new_score, step.bands)} AS new_status, base + j1 * %(day)s AS decayed_to
            FROM (SELECT id, score, status, base,
                         CASE WHEN %(now)s >= base THEN floor((%(now)s - base) / %(day)s) ELSE -1 END AS j1,
                         CASE WHEN last_decayed_at >= base
                              THEN floor((last_decayed_at - base) / %(day)s) ELSE -1 END AS j0
                  FROM (SELECT id, score, status, last_decayed_at,
                               coalesce(last_reinforced_at, created_at) + %(grace)s AS base
                        FROM rules
                        WHERE status IN ('active', 'dormant') AND pinned = 0 AND score < %(top)s
                          AND absorbed_into IS NULL) AS due) AS cycles
            WHERE j1 > j0
            ORDER BY id"""
        params = {
            "now": float(step.now),
            "day": float(step.day),
            "grace": float(step.grace),
            "loss": float(step.loss),
            "edge": float(step.edge),
            "top": float(step.bands[0][0]),
        }
        return list(self.conn.execute(sql, params).fetchall())

    # -- memories under decay ----------------------------------------------------------------------------
    def memory(self, memory_id: int) -> Any:
        return self.conn.execute("SELECT * FROM memories WHERE id = %s", (int(memory_id),)).fetchone()

    @staticmethod
    def _crossing_where(clock: DecayClock, until: float, agent: str | None) -> tuple[str, dict[str, Any]]:
        p = {**clock_params(clock), "until": float(until)}
        where = f"{DECAYING} AND {crossing_sql()} <= %(until)s"
        if agent is not None:
            where += " AND agent = %(agent)s"
            p["agent"] = agent
        return where, p

    def crossings_by_kind(self, clock: DecayClock, until: float, agent: str | None) -> dict[str, int]:
        where, p = self._crossing_where(clock, until, agent)
        got = self.conn.execute(f"SELECT kind, count(*) FROM memories WHERE {where} GROUP BY kind", p)
        return {r[0]: int(r[1]) for r in got}

    def crossings(self, clock: DecayClock, until: float, agent: str | None, limit: int) -> list[Any]:
        where, p = self._crossing_where(clock, until, agent)
        return list(
            self.conn.execute(
                f"SELECT id, kind, tier, agent, substr(content, 1, 120) AS preview,"
                f" {strength_sql()} AS s_now, {strength_sql('%(until)s')} AS s_then,"
                f" {crossing_sql()} AS crosses FROM memories WHERE {where}"
                f" ORDER BY crosses, id LIMIT %(limit)s",
                {**p, "limit": int(limit)},
            ).fetchall()
        )

    def strength_bins(self, clock: DecayClock, bins: int) -> list[tuple[str, int, int]]:
        p = {**clock_params(clock), "bins": int(bins)}
        # trunc(): SQLite's CAST(real AS INTEGER) truncates, PostgreSQL's rounds.
        got = self.conn.execute(
            f"SELECT tier, least(%(bins)s - 1, trunc({held_strength_sql()} * %(bins)s)::bigint) AS b,"
            f" count(*) FROM memories GROUP BY tier, b",
            p,
        )
        return [(r[0], int(r[1]), int(r[2])) for r in got]

    def below_threshold(self, clock: DecayClock) -> int:
        got = self.conn.execute(
            f"SELECT count(*) FROM memories WHERE {DECAYING} AND {strength_sql()} < %(thr)s",
            clock_params(clock),
        )
        return int(got.fetchone()[0])

    def crossings_per_day(
        self, clock: DecayClock, until: float, day: float, agent: str | None
    ) -> list[tuple[str, int, int, int]]:
        p: dict[str, Any] = {**clock_params(clock), "until": float(until), "day": float(day)}
        agent_sql = ""
        if agent is not None:
            agent_sql = " AND agent = %(agent)s"
            p["agent"] = agent
        # The crossing is computed once per row in the inner query; one pass yields both the
        # per-day counts and the overdue ones.
        sql = (
            f"SELECT kind, trunc(greatest(0.0, c - %(now)s) / %(day)s)::bigint AS d, count(*),"
            f" count(*) FILTER (WHERE c <= %(now)s) FROM (SELECT kind, {crossing_sql()} AS c FROM memories"
            f" WHERE {DECAYING}{agent_sql}) AS crossing WHERE c <= %(until)s GROUP BY kind, d"
        )
        return [(r[0], int(r[1]), int(r[2]), int(r[3] or 0)) for r in self.conn.execute(sql, p)]

    def last_decay_pass(self, key: str) -> float | None:
        r = self.conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return float(r[0]) if r else None

    # -- memories boot and the gates show ---------------------------------------------------------------
    def boot_items(self, category: str, agent: str | None, limit: int) -> list[Any]:
        where = ["category = %s", "tier IN ('core', 'active')", _LIVE]
        params: list[Any] = [category]
        if agent:
            where.append("(agent = %s OR agent = '')")
            params.append(agent)
        return list(
            self.conn.execute(
                f"SELECT id, category, content, agent, tier FROM memories WHERE "
                f"{' AND '.join(where)} ORDER BY tier = 'core' DESC, importance DESC, "
                f"created_at DESC, id DESC LIMIT %s",
                [*params, int(limit)],
            ).fetchall()
        )

    def state_entries(self, category: str, agent: str | None, limit: int) -> list[Any]:
        where = ["category = %s", "tier = 'active'", _LIVE]
        params: list[Any] = [category]
        if agent is not None:
            where.append("agent = %s")
            params.append(agent)
        return list(
            self.conn.execute(
                f"SELECT * FROM memories WHERE {' AND '.join(where)}"
                " ORDER BY updated_at DESC, id DESC LIMIT %s",
                [*params, int(limit)],
            ).fetchall()
        )

    def reinforce_candidates(self, skip_categories: Sequence[str]) -> list[Any]:
        return list(
            self.conn.execute(
                "SELECT id, created_at FROM memories WHERE tier = 'active' AND pinned = 0"
                " AND NOT (category = ANY(%s)) ORDER BY id",
                (list(skip_categories),),
            ).fetchall()
        )

    # -- flows -------------------------------------------------------------------------------------------
    def flows(
        self,
        *,
        domain: str | None = None,
        agent: str | None = None,
        status: str | None = None,
        for_agent: str | None = None,
    ) -> list[Any]:
        where: list[str] = ["TRUE"]
        params: list[Any] = []
        for col, val in (("domain", domain), ("agent", agent), ("status", status)):
            if val is not None:
                where.append(f"{col} = %s")
                params.append(val)
        if for_agent:
            where.append("(agent = %s OR agent = '')")
            params.append(for_agent)
        return list(
            self.conn.execute(
                f"SELECT * FROM flows WHERE {' AND '.join(where)} ORDER BY name", params
            ).fetchall()
        )
