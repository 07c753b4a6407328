"""The SQLite side of whole-database export and restore (engine/storage/dump.py): the catalogue
from sqlite_master and PRAGMA table_info, insertion order by rowid, vectors in the vec0 table,
PRAGMA defer_foreign_keys / foreign_key_check, and sqlite_sequence for ids handed out. Bulk
restores are executemany inside the caller's one transaction (the FTS5 and vector-log triggers
still fire per row, as for any insert). Table and column names come from the schema
(engine/storage/sqlite/schema.py), never from input."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import sqlean as sqlite3

from engine.storage.dump import VectorRow
from engine.storage.sqlite import room, schema

if TYPE_CHECKING:
    from engine.storage.port import Connection

UPKEEP_FROM = 1000  # rows restored in bulk from which a table's FTS5 indexes are rebuilt once after
_VEC_INSERT = (
    "INSERT INTO memories_vec(memory_id, embedding, tier, kind, category, agent, user) VALUES (?,?,?,?,?,?,?)"
)


class SqliteDump:
    generation = schema.GENERATION
    embed_dim = schema.EMBED_DIM
    error: type[Exception] = sqlite3.Error

    def disk_full(self, conn: Connection, exc: BaseException) -> bool:
        return room.full(conn, exc)

    def declared(self) -> list[tuple[str, dict[str, str]]]:
        return [(t.name, {c: d.upper() for c, d in t.columns}) for t in schema.TABLES]

    def tables(self, conn: Connection, names: Sequence[str]) -> list[tuple[str, list[str], list[str]]]:
        have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        out = []
        for name in names:
            if name not in have:
                continue
            info = conn.execute(f"PRAGMA table_info({name})").fetchall()
            cols = [r[1] for r in info]
            pk = [r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5])]
            out.append((name, cols, pk))
        return out

    def has_table(self, conn: Connection, name: str) -> bool:
        return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None

    def rows(
        self, conn: Connection, table: str, cols: Sequence[str], *, leave_out: Sequence[str] = ()
    ) -> Iterable[Any]:
        where, args = _leaving_out(leave_out)
        return conn.execute(f"SELECT {', '.join(cols)} FROM {table}{where} ORDER BY rowid", args)

    def count(self, conn: Connection, table: str, *, leave_out: Sequence[str] = ()) -> int:
        where, args = _leaving_out(leave_out)
        return int(conn.execute(f"SELECT count(*) FROM {table}{where}", args).fetchone()[0])

    def any_row(self, conn: Connection, table: str) -> bool:
        return conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None

    def row(
        self, conn: Connection, table: str, key: Sequence[str], values: Sequence[Any]
    ) -> dict[str, Any] | None:
        where = " AND ".join(f"{k} = ?" for k in key)
        got = conn.execute(f"SELECT * FROM {table} WHERE {where}", list(values)).fetchone()
        return None if got is None else dict(zip(got.keys(), got, strict=True))

    def has_id(self, conn: Connection, table: str, row_id: int) -> bool:
        return conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (row_id,)).fetchone() is not None

    def meta(self, conn: Connection) -> dict[str, Any]:
        return {r[0]: r[1] for r in conn.execute("SELECT key, value FROM meta").fetchall()}

    def savepoint(self, conn: Connection) -> None:
        conn.execute("SAVEPOINT mc_bulk")

    def rollback_savepoint(self, conn: Connection) -> None:
        conn.execute("ROLLBACK TO SAVEPOINT mc_bulk")

    def release_savepoint(self, conn: Connection) -> None:
        conn.execute("RELEASE SAVEPOINT mc_bulk")

    def memories_with_vectors(self, conn: Connection, cols: Sequence[str]) -> Iterable[Any]:
        return conn.execute(
            f"SELECT {', '.join('m.' + c for c in cols)}, v.embedding FROM memories m "
            f"LEFT JOIN memories_vec v ON v.memory_id = m.id ORDER BY m.rowid"
        )

    def insert(self, conn: Connection, table: str, row: dict[str, Any]) -> int:
        cols = list(row)
        got = conn.execute(
            f"INSERT INTO {table}({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) RETURNING rowid",
            [row[c] for c in cols],
        ).fetchall()
        return int(got[0][0])

    def insert_rows(
        self, conn: Connection, table: str, cols: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        conn.executemany(
            f"INSERT INTO {table}({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", rows
        )

    def restore_vectors(self, conn: Connection, vectors: Sequence[VectorRow], *, log: bool) -> None:
        conn.executemany(_VEC_INSERT, vectors)
        if log:  # in-memory vector matrices in other processes follow this log
            conn.executemany("INSERT INTO vector_changes(memory_id) VALUES (?)", [(v[0],) for v in vectors])

    def deferred_upkeep(self, conn: Connection, table: str, rows: int) -> Callable[[], None]:
        """The FTS5 indexes of `table`: their insert triggers dropped, then each index rebuilt from
        the table once (FTS5's 'rebuild', what reconcile does for a new one) and the triggers put
        back as sqlite_master had them: ~5x faster than a trigger per row into a trigram index."""
        if rows < UPKEEP_FROM:
            return lambda: None
        fts = [v for v in schema.VIRTUALS if f"content='{table}'" in v.sql and v.rebuild]
        if not fts:
            return lambda: None
        names = [f"{v.name}_ai" for v in fts]
        triggers = conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?"
            f" AND name IN ({', '.join('?' * len(names))})",
            [table, *names],
        ).fetchall()
        if len(triggers) != len(fts):  # not the schema's triggers: keep them firing
            return lambda: None
        for name, _ in triggers:
            conn.execute(f"DROP TRIGGER {name}")

        def rebuild() -> None:
            for v in fts:
                conn.execute(v.rebuild)
            for _, sql in triggers:
                conn.execute(sql)

        return rebuild

    def advance_ids(self, conn: Connection, table: str) -> None:
        """Nothing to do: an AUTOINCREMENT table's sqlite_sequence follows any larger id inserted."""

    def restore_vector(self, conn: Connection, memory: Any, embedding: bytes, *, log: bool) -> None:
        conn.execute(
            _VEC_INSERT,
            (memory["id"], embedding, memory["tier"], memory["kind"], memory["category"],
             memory["agent"] or "", memory["user"] or ""),
        )  # fmt: skip
        if log:  # in-memory vector matrices in other processes follow this log
            conn.execute("INSERT INTO vector_changes(memory_id) VALUES (?)", (memory["id"],))

    def defer_foreign_keys(self, conn: Connection) -> None:
        conn.execute("PRAGMA defer_foreign_keys = ON")

    def foreign_key_violations(self, conn: Connection) -> list[tuple[str, int, str]]:
        return [(r[0], r[1], r[2]) for r in conn.execute("PRAGMA foreign_key_check").fetchall()]

    def high_water(self, conn: Connection, table: str) -> int:
        seq = 0
        try:
            row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
            seq = int(row[0]) if row and row[0] is not None else 0
        except Exception:  # noqa: BLE001 - no AUTOINCREMENT table in this file
            pass
        top = conn.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0
        return max(seq, int(top))


def _leaving_out(keys: Sequence[str]) -> tuple[str, list[str]]:
    """The WHERE clause (and its parameters) that leaves out the rows with these `key`s."""
    if not keys:
        return "", []
    return f" WHERE key NOT IN ({', '.join('?' * len(keys))})", list(keys)
