"""The PostgreSQL side of whole-database export and restore (engine/storage/dump.py).

- Catalogue: information_schema (columns in declaration order, primary keys by position).
- Order: PostgreSQL keeps no insertion order; rows come by their key (ids grow with insertion;
  text-keyed tables such as sessions and meta come in key order).
- Vectors: `memory_vectors` (pgvector), as the float32 bytes the JSONL carries.
- Ids: a restored row keeps its id; the table's identity sequence is moved past it in the same
  statement, so the next id the engine hands out is never one a restore already used.
- Foreign keys: PostgreSQL enforces them per row (the schema's are not deferrable); exports come
  parents first, and a row whose parent is missing is refused when inserted (`error`), so no
  dangling row is left to report at the end.
- Bulk (a migration into an empty database): rows by COPY in text format, vectors by binary COPY
  (pgvector's binary form: no float formatting), identity sequences moved past the restored ids
  once per table, secondary indexes built once after the rows (`deferred_upkeep`); the triggers
  still queue every row in fts_pending, which the store tokenizes in one batch before commit
  (keyword_upkeep.py). Memories with vectors are read through a server-side binary cursor (bounded
  memory, no text parsing of 384 floats per row).
Table and column names come from the schema, never from input."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg
from pgvector import Vector
from psycopg import sql as pgsql

from engine.storage.dump import VectorRow
from engine.storage.postgres import schema
from engine.storage.postgres.connection import raw_of

if TYPE_CHECKING:
    from engine.storage.port import Connection

_VEC_COLS = ("memory_id", "embedding", "tier", "kind", "category", "agent", "user")
_VEC_TYPES = ("int8", "vector", "text", "text", "text", "text", "text")
_FETCH = 2000  # rows per round trip of the server-side cursor
UPKEEP_FROM = 1000  # rows restored in bulk from which a table's indexes are built once after
HNSW_BYTES_PER_VECTOR = 4096  # an HNSW graph's size per 384-d vector, with room (m = 16); at
# pgvector's default 64 MB a 50k graph does not fit and builds 3x slower (bench/migrate.py)
WORK_MEM_MAX = 1 << 30  # the most maintenance_work_mem a restore asks for


def _ident(name: str) -> pgsql.Composable:
    return pgsql.Identifier(name)


def _cols(cols: Sequence[str], prefix: str = "") -> pgsql.Composable:
    if prefix:
        return pgsql.SQL(", ").join(pgsql.Identifier(prefix, c) for c in cols)
    return pgsql.SQL(", ").join(pgsql.Identifier(c) for c in cols)


class PgDump:
    generation = schema.GENERATION
    embed_dim = schema.EMBED_DIM
    error: type[Exception] = psycopg.Error

    def disk_full(self, conn: Connection, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.errors.DiskFull)

    def __init__(self) -> None:
        self._sequences: dict[str, str | None] = {}

    def declared(self) -> list[tuple[str, dict[str, str]]]:
        return [(t.name, {c: d.upper() for c, d in t.columns}) for t in schema.TABLES]

    def tables(self, conn: Connection, names: Sequence[str]) -> list[tuple[str, list[str], list[str]]]:
        raw = raw_of(conn)
        cols: dict[str, list[str]] = {}
        for table, col in raw.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
        ).fetchall():
            if col not in schema.PG_ONLY_COLUMNS.get(table, ()):  # derived here (the chain's position)
                cols.setdefault(table, []).append(col)
        keys: dict[str, list[str]] = {}
        for table, col in raw.execute(
            "SELECT k.table_name, k.column_name FROM information_schema.table_constraints c"
            " JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name"
            " AND k.table_schema = c.table_schema AND k.table_name = c.table_name"
            " WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_schema = current_schema()"
            " ORDER BY k.table_name, k.ordinal_position"
        ).fetchall():
            keys.setdefault(table, []).append(col)
        return [(n, cols[n], keys.get(n, [])) for n in names if n in cols]

    def has_table(self, conn: Connection, name: str) -> bool:
        return (
            raw_of(conn)
            .execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()"
                " AND table_name = %s",
                [name],
            )
            .fetchone()
            is not None
        )

    def _order(self, conn: Connection, table: str) -> pgsql.Composable:
        keys = self.tables(conn, [table])
        pk = keys[0][2] if keys else []
        return _cols(pk) if pk else pgsql.SQL("ctid")

    def rows(
        self, conn: Connection, table: str, cols: Sequence[str], *, leave_out: Sequence[str] = ()
    ) -> Iterable[Any]:
        where, args = _leaving_out(leave_out)
        query = pgsql.SQL("SELECT {} FROM {}{} ORDER BY {}").format(
            _cols(cols), _ident(table), where, self._order(conn, table)
        )
        return raw_of(conn).execute(query, args)

    def count(self, conn: Connection, table: str, *, leave_out: Sequence[str] = ()) -> int:
        where, args = _leaving_out(leave_out)
        query = pgsql.SQL("SELECT count(*) FROM {}{}").format(_ident(table), where)
        return int(_first(raw_of(conn).execute(query, args).fetchone()))

    def any_row(self, conn: Connection, table: str) -> bool:
        query = pgsql.SQL("SELECT 1 FROM {} LIMIT 1").format(_ident(table))
        return raw_of(conn).execute(query).fetchone() is not None

    def row(
        self, conn: Connection, table: str, key: Sequence[str], values: Sequence[Any]
    ) -> dict[str, Any] | None:
        where = pgsql.SQL(" AND ").join(pgsql.SQL("{} = %s").format(_ident(k)) for k in key)
        query = pgsql.SQL("SELECT * FROM {} WHERE {}").format(_ident(table), where)
        # through `run`: a value PostgreSQL cannot hold (a NUL in text) is the input's fault
        cur = conn.execute(query.as_string(raw_of(conn)), list(values))
        got = cur.fetchone()
        if got is None:
            return None
        return {d.name: got[i] for i, d in enumerate(cur.description)}

    def has_id(self, conn: Connection, table: str, row_id: int) -> bool:
        query = pgsql.SQL("SELECT 1 FROM {} WHERE id = %s").format(_ident(table))
        return conn.execute(query.as_string(raw_of(conn)), [row_id]).fetchone() is not None

    def meta(self, conn: Connection) -> dict[str, Any]:
        return {r[0]: r[1] for r in raw_of(conn).execute("SELECT key, value FROM meta").fetchall()}

    def savepoint(self, conn: Connection) -> None:
        raw_of(conn).execute("SAVEPOINT mc_bulk")

    def rollback_savepoint(self, conn: Connection) -> None:
        raw_of(conn).execute("ROLLBACK TO SAVEPOINT mc_bulk")

    def release_savepoint(self, conn: Connection) -> None:
        raw_of(conn).execute("RELEASE SAVEPOINT mc_bulk")

    def memories_with_vectors(self, conn: Connection, cols: Sequence[str]) -> Iterable[Any]:
        query = pgsql.SQL(
            "SELECT {}, v.embedding FROM memories m LEFT JOIN memory_vectors v ON v.memory_id = m.id"
            " ORDER BY m.id"
        ).format(_cols(cols, "m"))
        raw = raw_of(conn)
        if raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:  # no snapshot to hold a cursor
            return _with_blobs(raw.cursor(binary=True).execute(query), len(cols))
        cur = raw.cursor(name=f"mc_vectors_{id(self):x}", binary=True)
        cur.itersize = _FETCH
        return _with_blobs(cur.execute(query), len(cols), close=cur)

    def insert(self, conn: Connection, table: str, row: dict[str, Any]) -> int:
        cols = list(row)
        values = pgsql.SQL(", ").join(pgsql.Placeholder() for _ in cols)
        seq = self._sequence(conn, table) if "id" in row else None
        if seq is None:
            query = pgsql.SQL("INSERT INTO {}({}) VALUES ({})").format(_ident(table), _cols(cols), values)
            raw_of(conn).execute(query, [row[c] for c in cols])
            key = row.get("id")
            return int(key) if isinstance(key, int) else 0
        # The sequence moves past a restored id in the same statement (never handed out again).
        query = pgsql.SQL(
            "WITH ins AS (INSERT INTO {}({}) VALUES ({}) RETURNING id)"
            " SELECT ins.id, setval({}, GREATEST(ins.id, s.last_value)) FROM ins, {} s"
        ).format(_ident(table), _cols(cols), values, pgsql.Literal(seq), pgsql.SQL(seq))
        return int(_first(raw_of(conn).execute(query, [row[c] for c in cols]).fetchone()))

    def insert_rows(
        self, conn: Connection, table: str, cols: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        query = pgsql.SQL("COPY {} ({}) FROM STDIN").format(_ident(table), _cols(cols))
        with raw_of(conn).cursor().copy(query) as cp:
            for r in rows:
                cp.write_row(r)

    def restore_vectors(self, conn: Connection, vectors: Sequence[VectorRow], *, log: bool) -> None:
        query = pgsql.SQL("COPY memory_vectors ({}) FROM STDIN (FORMAT BINARY)").format(_cols(_VEC_COLS))
        with raw_of(conn).cursor().copy(query) as cp:
            cp.set_types(list(_VEC_TYPES))
            for v in vectors:
                cp.write_row((v[0], Vector(np.frombuffer(v[1], dtype=np.float32)), *v[2:]))
        if log:  # in-memory vector matrices in other processes follow this log
            with raw_of(conn).cursor().copy("COPY vector_changes (memory_id) FROM STDIN") as cp:
                for v in vectors:
                    cp.write_row((v[0],))

    def deferred_upkeep(self, conn: Connection, table: str, rows: int) -> Callable[[], None]:
        """The table's secondary indexes (for memories, those of memory_vectors too: HNSW costs
        ~2.5 ms a vector inserted, a fraction of that built once; a pg_trgm GIN likewise): dropped
        and rebuilt from their own definitions after the rows, in the same transaction, as
        pg_restore does (other sessions wait on the table until commit, never see it without
        them). Keys and unique indexes stay: they check the rows as they come. The build gets the
        memory an HNSW graph needs (SET LOCAL: this transaction only, never below the server's
        setting). The keyword index needs nothing here: the store tokenizes the restored rows in
        one batch before commit."""
        if rows < UPKEEP_FROM:
            return lambda: None
        raw = raw_of(conn)
        names = [table, "memory_vectors"] if table == "memories" else [table]
        found = raw.execute(
            "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid"
            " JOIN pg_class t ON t.oid = x.indrelid WHERE t.relname = ANY(%s)"
            " AND t.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())"
            " AND NOT x.indisunique AND NOT x.indisprimary"
            " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)",
            [names],
        ).fetchall()
        if not found:
            return lambda: None
        raw.execute(
            pgsql.SQL("DROP INDEX {}").format(pgsql.SQL(", ").join(pgsql.Identifier(n) for n, _ in found))
        )

        def rebuild() -> None:
            have = _first(
                raw.execute("SELECT pg_size_bytes(current_setting('maintenance_work_mem'))").fetchone()
            )
            want = min(rows * HNSW_BYTES_PER_VECTOR, WORK_MEM_MAX)
            if want > int(have):
                raw.execute(f"SET LOCAL maintenance_work_mem = '{int(want) // 1024}kB'")
            for _, definition in found:
                raw.execute(definition)

        return rebuild

    def advance_ids(self, conn: Connection, table: str) -> None:
        """As `insert` does row by row: the sequence moves to the largest restored id (never back)."""
        seq = self._sequence(conn, table)
        if seq is None:
            return
        raw_of(conn).execute(
            pgsql.SQL(
                "SELECT setval({}, GREATEST(x.top, s.last_value))"
                " FROM (SELECT max(id) AS top FROM {}) x, {} s WHERE x.top IS NOT NULL"
            ).format(pgsql.Literal(seq), _ident(table), pgsql.SQL(seq))
        )

    def _sequence(self, conn: Connection, table: str) -> str | None:
        """The identity sequence of `table`'s id (quoted, schema-qualified), or None."""
        if table not in self._sequences:
            row = raw_of(conn).execute("SELECT pg_get_serial_sequence(%s, 'id')", [table]).fetchone()
            self._sequences[table] = row[0] if row and row[0] else None
        return self._sequences[table]

    def restore_vector(self, conn: Connection, memory: Any, embedding: bytes, *, log: bool) -> None:
        """One statement (one round trip per restored memory): the vector and, with `log`, its
        entry in the change log in-memory vector matrices of other processes follow."""
        insert = (
            'INSERT INTO memory_vectors(memory_id, embedding, tier, kind, category, agent, "user")'
            " VALUES (%s,%s,%s,%s,%s,%s,%s)"
        )
        args = [memory["id"], Vector(np.frombuffer(embedding, dtype=np.float32)), memory["tier"],
                memory["kind"], memory["category"], memory["agent"] or "", memory["user"] or ""]  # fmt: skip
        if log:
            insert = f"WITH v AS ({insert}) INSERT INTO vector_changes(memory_id) VALUES (%s)"
            args.append(memory["id"])
        raw_of(conn).execute(insert, args)

    def defer_foreign_keys(self, conn: Connection) -> None:
        """Nothing to defer (see the module docstring): a missing parent is refused per row."""

    def foreign_key_violations(self, conn: Connection) -> list[tuple[str, int, str]]:
        return []

    def high_water(self, conn: Connection, table: str) -> int:
        top = raw_of(conn).execute(pgsql.SQL("SELECT max(id) FROM {}").format(_ident(table))).fetchone()
        high = int(top[0]) if top and top[0] is not None else 0
        seq = self._sequence(conn, table)
        if seq is not None:
            row = (
                raw_of(conn)
                .execute(pgsql.SQL("SELECT last_value, is_called FROM {}").format(pgsql.SQL(seq)))
                .fetchone()
            )
            if row and row[1]:
                high = max(high, int(row[0]))
        return high


def _with_blobs(cur: Any, n: int, close: Any = None) -> Iterator[list[Any]]:
    """Rows with their embedding (pgvector's value, last) as float32 bytes."""
    try:
        for r in cur:
            out = [r[i] for i in range(n + 1)]
            v = out[n]
            if v is not None:
                out[n] = np.asarray(v.to_numpy() if isinstance(v, Vector) else v, dtype=np.float32).tobytes()
            yield out
    finally:
        if close is not None:
            with suppress(psycopg.Error):  # the snapshot may have ended first
                close.close()


def _leaving_out(keys: Sequence[str]) -> tuple[pgsql.Composable, list[Any]]:
    """The WHERE clause (and its parameter) that leaves out the rows with these `key`s."""
    if not keys:
        return pgsql.SQL(""), []
    return pgsql.SQL(" WHERE key <> ALL(%s)"), [list(keys)]


def _first(row: Any) -> Any:
    """The first value of a row a statement always returns (count(*), RETURNING, a setting)."""
    return row[0]
