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
Table and column names come from the schema, never from input."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import psycopg
from pgvector import Vector
from psycopg import sql as pgsql

from engine.storage.postgres import schema


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

    def __init__(self) -> None:
        self._sequences: dict[str, str | None] = {}

    def declared(self) -> list[tuple[str, dict[str, str]]]:
        return [(t.name, {c: d.upper() for c, d in t.columns}) for t in schema.TABLES]

    def tables(self, conn: Any, names: Sequence[str]) -> list[tuple[str, list[str], list[str]]]:
        raw = conn.raw
        cols: dict[str, list[str]] = {}
        for table, col in raw.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
        ).fetchall():
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

    def has_table(self, conn: Any, name: str) -> bool:
        return (
            conn.raw.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()"
                " AND table_name = %s",
                [name],
            ).fetchone()
            is not None
        )

    def _order(self, conn: Any, table: str) -> pgsql.Composable:
        keys = self.tables(conn, [table])
        pk = keys[0][2] if keys else []
        return _cols(pk) if pk else pgsql.SQL("ctid")

    def rows(self, conn: Any, table: str, cols: Sequence[str], where: str = "") -> Iterable[Any]:
        # `where` is a portable fragment built by the exporter (never input): through the mapper
        head = pgsql.SQL("SELECT {} FROM {}").format(_cols(cols), _ident(table)).as_string(conn.raw)
        order = pgsql.SQL(" ORDER BY {}").format(self._order(conn, table)).as_string(conn.raw)
        return conn.raw.execute(head + where + order)

    def memories_with_vectors(self, conn: Any, cols: Sequence[str]) -> Iterable[Any]:
        query = pgsql.SQL(
            "SELECT {}, v.embedding FROM memories m LEFT JOIN memory_vectors v ON v.memory_id = m.id"
            " ORDER BY m.id"
        ).format(_cols(cols, "m"))
        return _with_blobs(conn.raw.execute(query), len(cols))

    def insert(self, conn: Any, table: str, row: dict[str, Any]) -> int:
        cols = list(row)
        values = pgsql.SQL(", ").join(pgsql.Placeholder() for _ in cols)
        seq = self._sequence(conn, table) if "id" in row else None
        if seq is None:
            query = pgsql.SQL("INSERT INTO {}({}) VALUES ({})").format(_ident(table), _cols(cols), values)
            conn.raw.execute(query, [row[c] for c in cols])
            key = row.get("id")
            return int(key) if isinstance(key, int) else 0
        # The sequence moves past a restored id in the same statement (never handed out again).
        query = pgsql.SQL(
            "WITH ins AS (INSERT INTO {}({}) VALUES ({}) RETURNING id)"
            " SELECT ins.id, setval({}, GREATEST(ins.id, s.last_value)) FROM ins, {} s"
        ).format(_ident(table), _cols(cols), values, pgsql.Literal(seq), pgsql.SQL(seq))
        got = conn.raw.execute(query, [row[c] for c in cols]).fetchone()
        return int(got[0])

    def _sequence(self, conn: Any, table: str) -> str | None:
        """The identity sequence of `table`'s id (quoted, schema-qualified), or None."""
        if table not in self._sequences:
            row = conn.raw.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table]).fetchone()
            self._sequences[table] = row[0] if row and row[0] else None
        return self._sequences[table]

    def restore_vector(self, conn: Any, memory: Any, embedding: bytes, *, log: bool) -> None:
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
        conn.raw.execute(insert, args)

    def defer_foreign_keys(self, conn: Any) -> None:
        """Nothing to defer (see the module docstring): a missing parent is refused per row."""

    def foreign_key_violations(self, conn: Any) -> list[tuple[str, int, str]]:
        return []

    def high_water(self, conn: Any, table: str) -> int:
        top = conn.raw.execute(pgsql.SQL("SELECT max(id) FROM {}").format(_ident(table))).fetchone()
        high = int(top[0]) if top and top[0] is not None else 0
        seq = self._sequence(conn, table)
        if seq is not None:
            row = conn.raw.execute(
                pgsql.SQL("SELECT last_value, is_called FROM {}").format(pgsql.SQL(seq))
            ).fetchone()
            if row and row[1]:
                high = max(high, int(row[0]))
        return high


def _with_blobs(cur: Any, n: int) -> Iterator[list[Any]]:
    """Rows with their embedding (pgvector's value, last) as float32 bytes."""
    for r in cur:
        out = [r[i] for i in range(n + 1)]
        v = out[n]
        if v is not None:
            out[n] = np.asarray(v.to_numpy() if isinstance(v, Vector) else v, dtype=np.float32).tobytes()
        yield out
