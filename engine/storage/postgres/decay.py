"""PostgreSQL's side of the decay pass (engine/storage/lifecycle.py): the decay formulas in
PostgreSQL's own SQL (also what the lifecycle read model's forecasts use); the access path needs
no hint, PostgreSQL's planner chooses well on its own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from engine.storage.lifecycle import DecayChange, DecayClock, DecayFilter, DecayPath
from engine.types import KINDS

if TYPE_CHECKING:
    from engine.storage.port import Connection

DECAYING = "tier = 'active' AND pinned = 0"  # the rows a decay pass can archive


def rate_sql() -> str:
    """λ for the row's kind, from named parameters %(r_<kind>)s (see clock_params)."""
    whens = " ".join(f"WHEN '{k}' THEN %(r_{k})s" for k in KINDS)
    return f"(CASE kind {whens} ELSE %(r_semantic)s END)"


def strength_sql(now_param: str = "%(now)s") -> str:
    """Current strength of a decaying row (callers restrict to active, unpinned rows)."""
    # last_reinforced_at is NOT NULL: greatest() and SQLite's scalar max agree.
    return f"(anchor_strength * exp(-{rate_sql()} * greatest(0.0, {now_param} - last_reinforced_at)))"


def held_strength_sql(now_param: str = "%(now)s") -> str:
    """Current strength of any row: core and pinned memories hold their anchor."""
    return f"(CASE WHEN pinned = 1 OR tier = 'core' THEN anchor_strength ELSE {strength_sql(now_param)} END)"


def crossing_sql() -> str:
    """archive_at for a row: when its strength reaches %(thr)s."""
    return (
        f"(CASE WHEN anchor_strength <= %(thr)s THEN last_reinforced_at "
        f"ELSE last_reinforced_at + ln(anchor_strength / %(thr)s) / {rate_sql()} END)"
    )


def clock_params(clock: DecayClock) -> dict[str, Any]:
    """now, thr and r_<kind> for every kind (a kind without a rate decays at the semantic one)."""
    rates = dict(clock.rates)
    default = rates.get("semantic", 0.0)
    return {
        "now": float(clock.now),
        "thr": float(clock.threshold),
        **{f"r_{k}": float(rates.get(k, default)) for k in KINDS},
    }


_ASSIGN: dict[str, str] = {
    "schedule": f"archive_at = {crossing_sql()}",
    "archive": f"tier = 'archived', strength = {strength_sql()}, updated_at = %(now)s",
    "snapshot": f"strength = {strength_sql()}",
}


def where_sql(f: DecayFilter) -> tuple[str, dict[str, Any]]:
    """(WHERE clause, named parameters) of a decay filter."""
    terms: list[str] = []
    params = clock_params(f.clock)
    if f.archive_at == "unscheduled":
        terms.append("archive_at IS NULL")
    elif f.archive_at == "due":
        terms.append(
            f"coalesce(archive_at, {crossing_sql()}) <= %(now)s" if f.estimated else "archive_at <= %(now)s"
        )
    elif f.archive_at == "later":
        terms.append(
            f"coalesce(archive_at, {crossing_sql()}) > %(now)s" if f.estimated else "archive_at > %(now)s"
        )
    terms.append(DECAYING)
    if f.stale_by is not None:
        terms.append(f"strength - {strength_sql()} >= %(step)s")
        params["step"] = float(f.stale_by)
    return " AND ".join(terms), params


class PgDecayAccess:
    def count(self, conn: Connection, path: DecayPath, where: DecayFilter) -> int:
        sql, params = where_sql(where)
        return int(conn.execute(f"SELECT count(*) FROM memories WHERE {sql}", params).fetchone()[0])

    def ids(self, conn: Connection, path: DecayPath, where: DecayFilter) -> list[int]:
        sql, params = where_sql(where)
        return [int(r[0]) for r in conn.execute(f"SELECT id FROM memories WHERE {sql} ORDER BY id", params)]

    def update(self, conn: Connection, path: DecayPath, change: DecayChange, where: DecayFilter) -> int:
        sql, params = where_sql(where)
        return int(conn.execute(f"UPDATE memories SET {_ASSIGN[change]} WHERE {sql}", params).rowcount)

    def update_ids(
        self, conn: Connection, path: DecayPath, change: DecayChange, where: DecayFilter
    ) -> list[int]:
        sql, params = where_sql(where)
        got = conn.execute(f"UPDATE memories SET {_ASSIGN[change]} WHERE {sql} RETURNING id", params)
        return [int(r[0]) for r in got]

    @contextmanager
    def archive_index_dropped(self, conn: Connection) -> Iterator[bool]:
        yield False  # one UPDATE maintains PostgreSQL's index well enough
