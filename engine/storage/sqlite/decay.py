"""SQLite's side of the decay pass (engine/storage/lifecycle.py): the decay formulas in SQLite's
SQL (also what the lifecycle read model's forecasts use), `INDEXED BY` the partial
archive_at index, `NOT INDEXED` for full rewrites, rebuilding that index from its definition in
`sqlite_master` around a bulk update, and bursts of tier changes done set-based.

A burst (many memories archived at once: the first pass after importing old data, or after a
pause) would otherwise pay two per-row triggers for each row (schema.py): vec0's metadata update
(~1 ms a row through the virtual table) and a change-log insert. Past BURST_FROM rows those two
triggers are dropped inside the pass's own transaction and their work is done in bulk — vec0's
filter fields rewritten per chunk (vector.py `set_filters`), the change log filled by one INSERT —
then recreated before the commit, so no other connection ever sees the file without them. When
the tier is the only filter field that changes (the decay pass's archive step) only vec0's tier
column is written, from the ids alone, and the rows are rewritten in rowid order (`_update_tier`):
600,000 archived of 1M went from ~11 s to ~6 s, the rest being the commit's I/O (282 MB of WAL).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from engine.storage.lifecycle import DecayChange, DecayClock, DecayFilter, DecayPath
from engine.storage.sqlite.vector import SqliteVectorStore
from engine.types import KINDS

if TYPE_CHECKING:
    from engine.storage.port import Connection

Params = Mapping[str, Any] | Sequence[Any]

ARCHIVE_INDEX = "memories_archive_at"
BURST_FROM = 2_000  # rows; below it the per-row triggers cost less than a schema change
# A burst dirties most of the table's pages and its tier index (600,000 of 1M archived: 282 MB
# written): a cache smaller than that spills dirty pages to the WAL mid-statement and re-reads
# them (the default 2 MB: 60,000 rows 1.6 s -> 0.6 s; 1M: 256 MB -> 512 MB, 6.2 s -> 5.6 s). Only
# pages actually touched take memory, and the size goes back after the burst.
BURST_CACHE_KIB = 512 * 1024
# A burst this large a share of the table drops the archive_at index for its UPDATE.
BURST_SHARE = 0.25
VECTOR_TRIGGERS = ("memories_vec_meta", "memories_vlog_au")  # the per-row work a burst batches
_TABLE: dict[DecayPath, str] = {
    # Without ANALYZE statistics the planner prefers memories_tier and walks every active row.
    "archive_at": f"memories INDEXED BY {ARCHIVE_INDEX}",
    "scan": "memories NOT INDEXED",
    "planner": "memories",
}


# -- the decay formulas (engine/lifecycle/decay.py) in SQLite's SQL ---------------------------------
DECAYING = "tier = 'active' AND pinned = 0"  # the rows a decay pass can archive


def rate_sql() -> str:
    """λ for the row's kind, from named parameters :r_<kind> (see clock_params)."""
    whens = " ".join(f"WHEN '{k}' THEN :r_{k}" for k in KINDS)
    return f"(CASE kind {whens} ELSE :r_semantic END)"


def strength_sql(now_param: str = ":now") -> str:
    """Current strength of a decaying row (callers restrict to active, unpinned rows)."""
    return f"(anchor_strength * exp(-{rate_sql()} * max(0.0, {now_param} - last_reinforced_at)))"


def held_strength_sql(now_param: str = ":now") -> str:
    """Current strength of any row: core and pinned memories hold their anchor."""
    return f"(CASE WHEN pinned = 1 OR tier = 'core' THEN anchor_strength ELSE {strength_sql(now_param)} END)"


def crossing_sql() -> str:
    """archive_at for a row: when its strength reaches :thr."""
    return (
        f"(CASE WHEN anchor_strength <= :thr THEN last_reinforced_at "
        f"ELSE last_reinforced_at + ln(anchor_strength / :thr) / {rate_sql()} END)"
    )


def clock_params(clock: DecayClock) -> dict[str, Any]:
    """:now, :thr and :r_<kind> for every kind (a kind without a rate decays at the semantic one)."""
    rates = dict(clock.rates)
    default = rates.get("semantic", 0.0)
    return {
        "now": clock.now,
        "thr": clock.threshold,
        **{f"r_{k}": float(rates.get(k, default)) for k in KINDS},
    }


_ASSIGN: dict[str, str] = {
    "schedule": f"archive_at = {crossing_sql()}",
    "archive": f"tier = 'archived', strength = {strength_sql()}, updated_at = :now",
    "snapshot": f"strength = {strength_sql()}",
}


def assignments_sql(change: DecayChange) -> str:
    """The SET list of a decay change."""
    return _ASSIGN[change]


def where_sql(f: DecayFilter) -> tuple[str, dict[str, Any]]:
    """(WHERE clause, named parameters) of a decay filter."""
    terms: list[str] = []
    params = clock_params(f.clock)
    if f.archive_at == "unscheduled":
        terms.append("archive_at IS NULL")
    elif f.archive_at == "due":
        terms.append(
            f"coalesce(archive_at, {crossing_sql()}) <= :now" if f.estimated else "archive_at <= :now"
        )
    elif f.archive_at == "later":
        terms.append(
            f"(archive_at > :now OR (archive_at IS NULL AND {crossing_sql()} > :now))"
            if f.estimated
            else "archive_at > :now"
        )
    terms.append(DECAYING)
    if f.stale_by is not None:
        terms.append(f"strength - {strength_sql()} >= :step")
        params["step"] = float(f.stale_by)
    return " AND ".join(terms), params


class SqliteDecayAccess:
    def __init__(self, vectors: SqliteVectorStore | None = None) -> None:
        self.vectors = vectors or SqliteVectorStore()

    def count(self, conn: Connection, path: DecayPath, where: DecayFilter) -> int:
        sql, params = where_sql(where)
        return self._count(conn, path, sql, params)

    def ids(self, conn: Connection, path: DecayPath, where: DecayFilter) -> list[int]:
        sql, params = where_sql(where)
        return [
            int(r[0]) for r in conn.execute(f"SELECT id FROM {_TABLE[path]} WHERE {sql} ORDER BY id", params)
        ]

    def update(self, conn: Connection, path: DecayPath, change: DecayChange, where: DecayFilter) -> int:
        sql, params = where_sql(where)
        return int(
            conn.execute(f"UPDATE {_TABLE[path]} SET {assignments_sql(change)} WHERE {sql}", params).rowcount
        )

    def update_ids(
        self,
        conn: Connection,
        path: DecayPath,
        change: DecayChange | str,
        where: DecayFilter | str,
        params: Params | None = None,
    ) -> list[int]:
        """The port's typed update (a DecayChange, a DecayFilter); within this adapter also SQL
        fragments with their parameters (how its tests drive a burst of any filter field)."""
        if isinstance(where, DecayFilter):
            sql, named = where_sql(where)
            return self._update_ids(conn, path, assignments_sql(change), sql, named)  # type: ignore[arg-type]
        return self._update_ids(conn, path, str(change), where, params or {})

    @staticmethod
    def _count(conn: Connection, path: DecayPath, where: str, params: Params) -> int:
        return int(conn.execute(f"SELECT count(*) FROM {_TABLE[path]} WHERE {where}", params).fetchone()[0])

    def _update_ids(
        self, conn: Connection, path: DecayPath, assignments: str, where: str, params: Params
    ) -> list[int]:
        sql = f"UPDATE {_TABLE[path]} SET {assignments} WHERE {where} RETURNING id"
        n = self._count(conn, path, where, params)
        if n < BURST_FROM:
            return [int(r[0]) for r in conn.execute(sql, params)]
        tier = set_tier(assignments)
        with triggers_dropped(conn, VECTOR_TRIGGERS), cache_raised(conn, BURST_CACHE_KIB):
            if tier is None:  # other filter fields change: read every one back
                rows = conn.execute(sql + ", tier, kind, category, agent, user, embedded", params).fetchall()
                self.follow(conn, rows)
                return [int(r[0]) for r in rows]
            ids = self._update_tier(conn, path, assignments, where, params, n)
            self.vectors.set_filters(conn, [(i, tier) for i in ids], ("tier",))
            self.log(conn, ids)
        return ids

    def _update_tier(
        self, conn: Connection, path: DecayPath, assignments: str, where: str, params: Params, n: int
    ) -> list[int]:
        """The burst's UPDATE when only the tier changes among the vector filter fields: the ids
        read first (one integer column; RETURNING several columns doubled the statement's
        time), then the rows rewritten in rowid order, i.e. table page after table page. When
        they are a large part of the table the archive_at index, which they all leave, is
        dropped and rebuilt from the rows that stay (fewer than it loses) instead of losing its
        entries one by one, and the rows are found by a plain scan."""
        ids = [r[0] for r in conn.execute(f"SELECT id FROM {_TABLE[path]} WHERE {where}", params)]
        ids.sort()
        whole = path == "archive_at" and n >= BURST_SHARE * self._table_rows(conn)
        with self.archive_index_dropped(conn) if whole else nullcontext(False) as dropped:
            done = int(
                conn.execute(
                    f"UPDATE {_TABLE['scan' if dropped else path]} SET {assignments} WHERE {where}",
                    params,
                ).rowcount
            )
        if done != len(ids):  # the same WHERE in the same transaction: never, but not silently
            raise RuntimeError(f"archive burst: {len(ids)} rows selected, {done} updated")
        return ids

    @staticmethod
    def _table_rows(conn: Connection) -> int:
        """The table's size to within deletions (max(id) is one index probe; count(*) a scan)."""
        return int(conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0])

    @staticmethod
    def log(conn: Connection, ids: list[int]) -> None:
        """Every id (sorted integers) as changed in the change log, in one INSERT. The log keeps
        only its latest entries (schema.py vector_changes_prune): of a burst longer than that
        only the entries the trigger would leave are written, with the numbers they would have
        had, and the older ones it would delete are deleted (600,000 ids: 0.27 -> 0.10 s CPU)."""
        first = 1 + int(
            conn.execute(
                "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'), 0),"
                " coalesce((SELECT max(seq) FROM vector_changes), 0))"
            ).fetchone()[0]
        )
        cut = pruned_upto(conn, first, len(ids))
        skip = max(0, cut - first + 1)
        if not skip:
            conn.execute(
                "INSERT INTO vector_changes(memory_id) SELECT value FROM json_each(?)", (json.dumps(ids),)
            )
            return
        conn.execute("DELETE FROM vector_changes WHERE seq <= ?", (cut,))
        conn.execute(
            "INSERT INTO vector_changes(seq, memory_id) SELECT ? + key, value FROM json_each(?)",
            (first + skip, json.dumps(ids[skip:])),
        )

    def follow(self, conn: Connection, rows: list[Any]) -> None:
        """What the vector triggers would have done for each updated row (id, tier, kind,
        category, agent, user, embedded), set-based: vec0's filter fields of the embedded ones
        set from the row, and every id logged as changed (a reader of the log re-reads a logged
        memory, so logging one whose fields did not change is safe)."""
        if not rows:
            return
        self.vectors.set_filters(conn, [r for r in rows if r[6]])
        ids = [r[0] for r in rows]  # integers already (RETURNING id)
        ids.sort()
        self.log(conn, ids)

    @contextmanager
    def archive_index_dropped(self, conn: Connection) -> Iterator[bool]:
        row = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (ARCHIVE_INDEX,)
        ).fetchone()
        if row is None:
            yield False
            return
        conn.execute(f"DROP INDEX {ARCHIVE_INDEX}")
        yield True
        conn.execute(row[0])


@contextmanager
def triggers_dropped(conn: Connection, names: tuple[str, ...]) -> Iterator[None]:
    """Inside the caller's transaction: `names` dropped for the block and recreated from their
    definitions after it (an error rolls the whole transaction back, drops included)."""
    defs = [
        r[0]
        for r in conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN "
            f"({', '.join('?' for _ in names)})",
            names,
        )
    ]
    for name in names:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    yield
    for sql in defs:
        conn.execute(sql)


@contextmanager
def cache_raised(conn: Connection, kib: int) -> Iterator[None]:
    """This connection's page cache at least `kib` for the block, then back to what it was."""
    before = int(conn.execute("PRAGMA cache_size").fetchone()[0])
    size = before if before < 0 else -before * 4  # pages -> KiB (negative), assuming 4 KiB pages
    if -size >= kib:
        yield
        return
    conn.execute(f"PRAGMA cache_size = {-int(kib)}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size = {before}")


# Columns the vector triggers watch besides tier (schema.py memories_vec_meta, memories_vlog_au).
_OTHER_WATCHED = re.compile(r"\b(kind|category|agent|user|embedded)\s*=", re.IGNORECASE)
_TIER_LITERAL = re.compile(r"(?:^|,)\s*tier\s*=\s*'([a-z_]+)'\s*(?:,|$)")


def set_tier(assignments: str) -> str | None:
    """The tier `assignments` sets every row to, when that literal is the only vector filter
    field it sets; None otherwise (the burst then reads every changed row's fields back)."""
    m = _TIER_LITERAL.search(assignments)
    return m.group(1) if m and not _OTHER_WATCHED.search(assignments) else None


_PRUNE = re.compile(r"new\.seq\s*%\s*(\d+)\s*=\s*0\b.*\bseq\s*<=\s*new\.seq\s*-\s*(\d+)", re.S | re.I)


def pruned_upto(conn: Connection, first: int, n: int) -> int:
    """The highest change-log number the prune trigger would delete while `n` entries are
    appended from number `first` (0: none, or a trigger this does not recognise)."""
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'vector_changes_prune'"
    ).fetchone()
    m = _PRUNE.search(row[0]) if row else None
    if m is None or n <= 0:
        return 0
    every, keep = int(m.group(1)), int(m.group(2))
    last = first + n - 1
    top = last - last % every  # the last number the trigger fires at
    return max(0, top - keep) if top >= first else 0
