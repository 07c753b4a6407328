"""SQLite side of `doctor`: `PRAGMA integrity_check`, each FTS5 index against its table (its
docsize shadow table) and FTS5's own 'integrity-check', vec0 against memories and their repair,
and the reads behind the malformed-row checks (typeof / json_valid, vectors by rowid)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import sqlean as sqlite3

from engine.errors import DatabaseDamaged, EngineError
from engine.storage.health import IndexCoverage, Offenders, VectorGaps, json_columns
from engine.storage.sqlite import schema
from engine.storage.sqlite.identity import uri

if TYPE_CHECKING:
    from engine.storage.port import Connection
    from engine.storage.sqlite.store import Store

# (FTS table, its content table): identifiers from the schema module only, never from input.
FTS_TABLES = tuple(
    (v.name, m.group(1))
    for v in schema.VIRTUALS
    if "USING fts5" in v.sql and (m := re.search(r"content='(\w+)'", v.sql))
)
VEC_META = ("tier", "kind", "category", "agent", "user")
_DIFFERS = " OR ".join(f"v.{col} IS NOT m.{col}" for col in VEC_META)
_MAX = "1.7976931348623157e308"


def _offenders(conn: Connection, sql: str, sample: int) -> Offenders:
    rows = conn.execute(sql).fetchall()
    return Offenders(len(rows), [r[0] for r in rows[:sample]])


def integrity(conn: Connection) -> list[str]:
    try:
        res = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
    except sqlite3.Error as exc:
        res = [str(exc)]
    return [] if res == ["ok"] else res


def file_integrity(path: str | os.PathLike) -> tuple[str | None, list[str]]:
    """(why the file cannot be opened, or None; its integrity problems) through a read-only,
    immutable connection: nothing is written, not even a -wal."""
    try:
        c = sqlite3.connect(uri(path, mode="ro", immutable="1"), uri=True)
    except sqlite3.Error as exc:
        return str(exc), []
    try:
        return None, integrity(c)
    finally:
        c.close()


class SqliteHealth:
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)

    def __init__(self, store: Store) -> None:
        self._store = store  # FTS5 checks an index through an INSERT: a write

    @property
    def dimensions(self) -> int:
        """The width of the store's model (meta vector_dim, engine/embedding/tag.py; untagged:
        the default model's)."""
        got = self._store.query(lambda c: c.meta.get("vector_dim"))
        return int(got) if got else schema.EMBED_DIM

    def integrity(self, conn: Connection) -> list[str]:
        return integrity(conn)

    def keyword_indexes(self) -> list[tuple[str, str]]:
        return list(FTS_TABLES)

    def coverage(self, conn: Connection, index: str, table: str, sample: int) -> IndexCoverage:
        # An external-content FTS5 table reads rows from its table; its docsize shadow table is
        # what the index itself holds.
        n_idx = conn.execute(f"SELECT count(*) FROM {index}_docsize").fetchone()[0]
        missing = _offenders(
            conn, f"SELECT id FROM {table} WHERE id NOT IN (SELECT id FROM {index}_docsize)", sample
        )
        extra = _offenders(
            conn, f"SELECT id FROM {index}_docsize WHERE id NOT IN (SELECT id FROM {table})", sample
        )
        return IndexCoverage(n_idx, missing, extra)

    def index_integrity(self, index: str) -> tuple[bool, str]:
        """It changes nothing, hence no audit row."""
        sql = f"INSERT INTO {index}({index}, rank) VALUES ('integrity-check', 1)"
        try:
            self._store.write(lambda c: c.execute(sql))
            return True, "ok"
        except DatabaseDamaged as exc:  # FTS5 reports a mismatch as SQLITE_CORRUPT_VTAB
            return False, f"index disagrees with its table ({exc})"
        except EngineError as exc:  # a read-only file: FTS5 checks through an INSERT, so skip it
            return True, f"not checked: {exc}"
        except sqlite3.Error as exc:
            return False, f"index disagrees with its table ({exc})"

    def vector_gaps(self, conn: Connection, sample: int) -> VectorGaps:
        stored = conn.execute("SELECT count(*) FROM memories_vec").fetchone()[0]
        missing = _offenders(
            conn,
            "SELECT id FROM memories WHERE embedded = 1 AND id NOT IN (SELECT memory_id FROM memories_vec)",
            sample,
        )
        orphans = _offenders(
            conn,
            "SELECT memory_id FROM memories_vec WHERE memory_id NOT IN (SELECT id FROM memories)",
            sample,
        )
        stale = _offenders(
            conn,
            "SELECT m.id FROM memories m JOIN memories_vec v ON v.memory_id = m.id "
            f"WHERE m.embedded = 1 AND ({_DIFFERS})",
            sample,
        )
        return VectorGaps(stored, missing, orphans, stale)

    def repair(self, conn: Connection) -> list[str]:
        acts = []
        for fts, _ in FTS_TABLES:
            conn.execute(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")
        acts.append("rebuilt full-text indexes")
        n = conn.execute("DELETE FROM memories_vec WHERE memory_id NOT IN (SELECT id FROM memories)").rowcount
        if n:
            acts.append(f"removed {n} orphan vectors")
        n = conn.execute(
            "UPDATE memories SET embedded = 0 WHERE embedded = 1"
            " AND id NOT IN (SELECT memory_id FROM memories_vec)"
        ).rowcount
        if n:
            acts.append(f"{n} memories without a vector marked pending")
        stale = conn.execute(
            "SELECT m.id, m.tier, m.kind, m.category, m.agent, m.user FROM memories m JOIN "
            f"memories_vec v ON v.memory_id = m.id WHERE m.embedded = 1 AND ({_DIFFERS})"
        ).fetchall()
        for r in stale:
            conn.execute(
                "UPDATE memories_vec SET tier = ?, kind = ?, category = ?, agent = ?, user = ?"
                " WHERE memory_id = ?",
                (r[1], r[2], r[3], r[4] or "", r[5] or "", r[0]),
            )
        if stale:
            acts.append(f"resynced filter fields of {len(stale)} vectors")
        return acts

    # -- the reads behind the malformed-row checks ------------------------------------------------
    def number_suspects(self, conn: Connection, sample: int) -> list[tuple[str, Any, str, Any, bool]]:
        out = []
        for t in schema.TABLES:
            cols = [n for n, d in t.columns if n != "id" and d.split()[0] in ("REAL", "INTEGER")]
            if not cols:
                continue
            bad = " OR ".join(
                f"(typeof({n}) = 'real' AND abs({n}) > {_MAX})"
                if _reference(n)
                else f"typeof({n}) NOT IN ('integer', 'real', 'null') OR abs({n}) > {_MAX}"
                for n in cols
            )
            key = _key(t)
            for row in conn.execute(
                f"SELECT {key}, {', '.join(cols)} FROM {t.name} WHERE {bad} LIMIT {int(sample)}"
            ):
                for n, v in zip(cols, tuple(row)[1:], strict=True):
                    out.append((t.name, row[0], n, v, _reference(n)))
        return out

    def json_suspects(self, conn: Connection, sample: int) -> list[tuple[str, Any, str, Any, str]]:
        """Through json1: a value that is not JSON at all, or JSON of another type than the
        column's (doctor's verdict on each is in engine/health/rows.py)."""
        out = []
        for t in schema.TABLES:
            cols = json_columns(t.columns, t.name)
            if not cols:
                continue
            conds = [
                f"({n} IS NOT NULL AND CASE WHEN json_valid({n}) THEN json_type({n}) != '{kind}' ELSE 1 END)"
                for n, kind in cols.items()
            ]
            names = list(cols)
            sql = f"SELECT {_key(t)}, {', '.join(names)} FROM {t.name} WHERE {' OR '.join(conds)}"
            for row in conn.execute(f"{sql} LIMIT {int(sample)}"):
                for n, v in zip(names, tuple(row)[1:], strict=True):
                    out.append((t.name, row[0], n, v, cols[n]))
        return out

    def vector_batches(self, conn: Connection) -> Iterator[list[tuple[Any, bytes | None]]]:
        cur = conn.execute("SELECT memory_id, embedding FROM memories_vec")
        while batch := cur.fetchmany(4096):
            yield [(r[0], r[1]) for r in batch]

    def vectors_one_by_one(self, conn: Connection) -> Iterator[tuple[Any, bytes | None, str | None]]:
        for (mid,) in conn.execute("SELECT rowid FROM memories_vec_rowids").fetchall():
            try:
                rows = conn.execute(
                    "SELECT memory_id, embedding FROM memories_vec WHERE memory_id = ?", (mid,)
                ).fetchall()
            except sqlite3.Error as exc:
                yield mid, None, f"the vector cannot be read ({exc})"
                continue
            for r in rows:
                yield r[0], r[1], None


def _reference(name: str) -> bool:
    """An id pointing elsewhere is never computed with: only an infinite value there is flagged
    (a stray text in one is the orphan checks' business, not arithmetic's)."""
    return name.endswith("_id") or name in ("absorbed_into", "watermark")


def _key(t: schema.Table) -> str:
    return "id" if t.columns and t.columns[0][0] == "id" else "rowid"
