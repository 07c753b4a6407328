"""PostgreSQL side of `doctor`: the server checks (pgvector present and its version, the schema
generation, the tables, indexes and triggers the engine expects, this role's privileges, the change
counter), each keyword index (fts_terms / fts_docs) against its table and against the lexemes the
engine makes now, memory_vectors against memories and their repair, and the reads behind the
malformed-row checks. Every problem is one line."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import psycopg

from engine.storage.health import IndexCoverage, Offenders, VectorGaps, json_columns
from engine.storage.lexemes import counted
from engine.storage.postgres import schema, trigram_index
from engine.storage.postgres.vector_wire import blob_of, sent

if TYPE_CHECKING:
    from engine.storage.port import Connection
    from engine.storage.postgres.store import PgStore

VECTOR_MIN = (0, 8)  # HNSW iterative scan (filtered KNN that still returns k rows)
VEC_META = ("tier", "kind", "category", "agent", '"user"')
_DIFFERS = " OR ".join(f"v.{c} IS DISTINCT FROM m.{c}" for c in VEC_META)
# index name doctor shows -> keyword source (fts_terms.src) and its table
INDEXES = {f"{src}_words": src for src in schema.KEYWORD_SOURCES}
PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")


def _offenders(conn: Connection, sql: str, sample: int, params: Sequence[Any] = ()) -> Offenders:
    rows = conn.execute(sql, params).fetchall()
    return Offenders(len(rows), [r[0] for r in rows[:sample]])


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".")[:2] if p.isdigit())


def expected_tables() -> list[str]:
    return [t.name for t in schema.PG_TABLES] + list(schema.EXTRA_TABLE_NAMES)


def expected_indexes() -> list[str]:
    return list(schema.PG_INDEXES) + list(schema.EXTRA_INDEX_NAMES)


def server_problems(conn: Connection) -> list[str]:
    """What is missing or wrong on the server for this engine, one line each (empty: all there)."""
    out: list[str] = []
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
        out.append(
            "pgvector: the 'vector' extension is not installed in this database (CREATE EXTENSION vector)"
        )
    elif _version(row[0]) < VECTOR_MIN:
        out.append(
            f"pgvector {row[0]}: filtered HNSW search needs >= {'.'.join(map(str, VECTOR_MIN))}"
            " (iterative scan); vector search scans exactly"
        )
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    gen = int(meta.get("generation") or 0)
    if gen != schema.GENERATION:
        out.append(
            f"schema generation {gen}, this memconsole writes {schema.GENERATION}: open it read-write once"
        )
    elif meta.get("pg_schema") != schema.schema_hash():
        out.append("the schema differs from this memconsole's (functions, triggers): open it read-write once")
    have_tables = {
        r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    }
    missing = [t for t in expected_tables() if t not in have_tables]
    if missing:
        out.append(f"missing tables: {', '.join(missing)}")
    have_idx = {
        r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()")
    }
    missing = [i for i in expected_indexes() if i not in have_idx]
    if missing:
        out.append(f"missing indexes: {', '.join(missing)}")
    have_trg = {r[0] for r in conn.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")}
    missing = [t for t in schema.TRIGGER_NAMES if t not in have_trg]
    if missing:
        out.append(f"missing triggers (keyword index / vector upkeep): {', '.join(missing)}")
    for priv in PRIVILEGES:
        lacking = [
            t
            for t in expected_tables()
            if t in have_tables
            and not conn.execute("SELECT has_table_privilege(%s, %s)", [t, priv]).fetchone()[0]
        ]
        if lacking:
            out.append(f"this role ({_role(conn)}) cannot {priv} on: {', '.join(lacking)}")
    if not conn.execute("SELECT has_schema_privilege(current_schema(), 'CREATE')").fetchone()[0]:
        out.append(
            f"this role ({_role(conn)}) cannot CREATE in schema {_schema(conn)}: a newer memconsole could not"
            " add its tables"
        )
    return out


def _role(conn: Connection) -> str:
    return str(conn.execute("SELECT current_user").fetchone()[0])


def _schema(conn: Connection) -> str:
    return str(conn.execute("SELECT current_schema()").fetchone()[0])


POOLED = (
    "a connection pooler sits in front (PgBouncer): no prepared statements; live views poll the"
    " change sequence (for LISTEN, connect consoles to the server itself); pg_trgm"
    " indexes are built only over a direct connection"
)


class PgHealth:
    errors: tuple[type[BaseException], ...] = (psycopg.errors.DataCorrupted, psycopg.errors.IndexCorrupted)
    integrity_name = "server"  # doctor's name for integrity()'s findings, one per problem

    def __init__(self, store: PgStore) -> None:
        self._store = store

    @property
    def dimensions(self) -> int:
        """The width of the store's model (meta vector_dim, engine/embedding/tag.py; untagged:
        the default model's)."""
        got = self._store.query(lambda c: c.meta.get("vector_dim"))
        return int(got) if got else schema.EMBED_DIM

    def integrity(self, conn: Connection) -> list[str]:
        return server_problems(conn)

    def paths(self, conn: Connection) -> list[tuple[str, bool, str]]:
        """(check, sound, one line) for what this server can serve more than one way: which path
        trigram (CJK, substring) search takes to its candidates, and why."""
        trigram = trigram_index.state(conn)
        found = [("trigram-search", trigram.sound, trigram.detail)]
        if self._store.pooled:  # pooler.py: what the store does differently through it
            found.append(("connection-pooler", True, POOLED))
        return found

    def keyword_indexes(self) -> list[tuple[str, str]]:
        return [(name, schema.KEYWORD_SOURCES[src][0]) for name, src in INDEXES.items()]

    def coverage(self, conn: Connection, index: str, table: str, sample: int) -> IndexCoverage:
        src = INDEXES[index]
        n_idx = conn.execute("SELECT count(*) FROM fts_docs WHERE src = %s", [src]).fetchone()[0]
        missing = _offenders(
            conn,
            f"SELECT id FROM {table} t WHERE NOT EXISTS"
            " (SELECT 1 FROM fts_docs d WHERE d.src = %s AND d.doc_id = t.id) ORDER BY id",
            sample,
            [src],
        )
        extra = _offenders(
            conn,
            f"SELECT doc_id FROM fts_docs d WHERE d.src = %s AND NOT EXISTS (SELECT 1 FROM {table} t"
            " WHERE t.id = d.doc_id) ORDER BY doc_id",
            sample,
            [src],
        )
        return IndexCoverage(int(n_idx), missing, extra)

    def index_integrity(self, index: str) -> tuple[bool, str]:
        """Every indexed document's terms and length equal what the engine's tokenizer makes of its
        row now (a read: one snapshot, no lock)."""
        src = INDEXES[index]
        table, cols = schema.KEYWORD_SOURCES[src]
        with self._store.reading() as conn:
            stored: dict[int, dict[str, int]] = defaultdict(dict)
            for doc, term, tf in conn.execute("SELECT doc_id, term, tf FROM fts_terms WHERE src = %s", [src]):
                stored[int(doc)][term] = int(tf)
            lengths = {
                int(r[0]): int(r[1])
                for r in conn.execute("SELECT doc_id, len FROM fts_docs WHERE src = %s", [src])
            }
            names = ", ".join(f'"{c}"' for c in cols)
            wrong: list[int] = []
            for r in conn.execute(f"SELECT id, {names} FROM {table} ORDER BY id"):
                tf, length = counted(" ".join(str(v) for v in tuple(r)[1:] if v is not None))
                doc = int(r[0])
                if doc in lengths and (lengths[doc] != length or stored.get(doc, {}) != dict(tf)):
                    wrong.append(doc)
        if wrong:
            return False, f"{len(wrong)} indexed rows differ from their text (ids {wrong[:5]})"
        return True, "ok"

    def vector_gaps(self, conn: Connection, sample: int) -> VectorGaps:
        stored = conn.execute("SELECT count(*) FROM memory_vectors").fetchone()[0]
        missing = _offenders(
            conn,
            "SELECT id FROM memories m WHERE embedded = 1 AND NOT EXISTS"
            " (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id) ORDER BY id",
            sample,
        )
        orphans = _offenders(
            conn,
            "SELECT memory_id FROM memory_vectors v WHERE NOT EXISTS"
            " (SELECT 1 FROM memories m WHERE m.id = v.memory_id) ORDER BY memory_id",
            sample,
        )
        stale = _offenders(
            conn,
            "SELECT m.id FROM memories m JOIN memory_vectors v ON v.memory_id = m.id"
            f" WHERE m.embedded = 1 AND ({_DIFFERS}) ORDER BY m.id",
            sample,
        )
        return VectorGaps(int(stored), missing, orphans, stale)

    def repair(self, conn: Connection) -> list[str]:
        acts = []
        lost = [p for p in server_problems(conn) if p.startswith("missing ")]
        if lost:  # every statement is idempotent: only what is missing is made
            for stmt in schema.reconcile_statements():
                conn.execute(stmt)
            acts.append("re-created " + "; ".join(p.removeprefix("missing ") for p in lost))
        # Every row goes back to the tokenizer before this write commits; index rows of deleted
        # rows go.
        for src, (table, _) in schema.KEYWORD_SOURCES.items():
            conn.execute("DELETE FROM fts_terms WHERE src = %s", [src])
            conn.execute("DELETE FROM fts_docs WHERE src = %s", [src])
            conn.execute(f"INSERT INTO fts_pending(src, doc_id) SELECT %s, id FROM {table}", [src])
        acts.append("rebuilt full-text indexes")
        n = conn.execute(
            "DELETE FROM memory_vectors v"
            " WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = v.memory_id)"
        ).rowcount
        if n:
            acts.append(f"removed {n} orphan vectors")
        n = conn.execute(
            "UPDATE memories m SET embedded = 0 WHERE embedded = 1"
            " AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id)"
        ).rowcount
        if n:
            acts.append(f"{n} memories without a vector marked pending")
        n = conn.execute(
            "UPDATE memory_vectors v SET tier = m.tier, kind = m.kind, category = m.category,"
            " agent = coalesce(m.agent, ''), \"user\" = coalesce(m.\"user\", '') FROM memories m"
            f" WHERE v.memory_id = m.id AND m.embedded = 1 AND ({_DIFFERS})"
        ).rowcount
        if n:
            acts.append(f"resynced filter fields of {n} vectors")
        return acts

    # -- the reads behind the malformed-row checks ------------------------------------------------
    def number_suspects(self, conn: Connection, sample: int) -> list[tuple[str, Any, str, Any, bool]]:
        """Columns are typed here (bigint, double precision): only a double can be NaN or infinite."""
        out = []
        for t in schema.PG_TABLES:
            cols = [n for n, d in t.columns if n != "id" and d.startswith("double precision")]
            if not cols:
                continue
            bad = " OR ".join(
                f"{n} IN ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8)" for n in cols
            )
            for row in conn.execute(
                f"SELECT {_key(t)}, {', '.join(cols)} FROM {t.name} WHERE {bad} LIMIT {int(sample)}"
            ):
                for n, v in zip(cols, tuple(row)[1:], strict=True):
                    out.append((t.name, row[0], n, v, _reference(n)))
        return out

    def json_suspects(self, conn: Connection, sample: int) -> list[tuple[str, Any, str, Any, str]]:
        """JSON columns (text here) holding no JSON, or JSON of another type than the code expects:
        validity by `pg_input_is_valid` (no exception per row), the type by `jsonb_typeof`."""
        out = []
        for t in schema.PG_TABLES:
            cols = json_columns(t.columns, t.name)
            if not cols:
                continue
            conds = [
                f"({n} IS NOT NULL AND CASE WHEN pg_input_is_valid({n}, 'jsonb')"
                f" THEN jsonb_typeof({n}::jsonb) <> '{kind}' ELSE true END)"
                for n, kind in cols.items()
            ]
            names = list(cols)
            sql = f"SELECT {_key(t)}, {', '.join(names)} FROM {t.name} WHERE {' OR '.join(conds)}"
            for row in conn.execute(f"{sql} LIMIT {int(sample)}"):
                for n, v in zip(names, tuple(row)[1:], strict=True):
                    out.append((t.name, row[0], n, v, cols[n]))
        return out

    def vector_batches(self, conn: Connection) -> Iterator[list[tuple[Any, bytes | None]]]:
        rows = conn.execute(
            f"SELECT memory_id, {sent('embedding')} FROM memory_vectors ORDER BY memory_id"
        ).fetchall()
        for i in range(0, len(rows), 4096):
            yield [(r[0], blob_of(r[1])) for r in rows[i : i + 4096]]

    def vectors_one_by_one(self, conn: Connection) -> Iterator[tuple[Any, bytes | None, str | None]]:
        for batch in self.vector_batches(conn):
            for mid, blob in batch:
                yield mid, blob, None


def _reference(name: str) -> bool:
    return name.endswith("_id") or name in ("absorbed_into", "watermark")


def _key(t: schema.PgTable) -> str:
    return "id" if t.columns and t.columns[0][0] == "id" else t.columns[0][0]
