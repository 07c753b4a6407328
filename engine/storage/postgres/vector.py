"""pgvector behind the vector store (engine/storage/indexes.py): `memory_vectors`, one vector(384)
per memory with the filter fields beside it, filtered inside the query.

KNN scans exactly below `search.pg_exact_below` vectors (the table's size as the planner last
counted it), or when the filter keeps fewer rows than that (the planner's estimate: a selective
filter is cheaper scanned than walked). Otherwise it walks the cosine HNSW index with
`hnsw.iterative_scan = relaxed_order` (pgvector >= 0.8): a filter that rejects most neighbours
makes the scan continue instead of returning fewer than k rows; the first ef rows that pass are
re-sorted exactly and the best k kept (ef = `hnsw.ef_search` = max(`search.pg_ef_search`, k)).
Explain's ranks (`count_closer`) stay exact."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector import Vector

from engine.embedding.registry import DEFAULT_MODEL
from engine.storage.indexes import MemoryFilter
from engine.storage.port import Connection
from engine.storage.postgres.connection import PgConnection, raw_of
from engine.storage.postgres.filters import where as render
from engine.storage.postgres.vector_wire import blob_of, sent


def _vec(blob: bytes) -> Vector:
    return Vector(np.frombuffer(blob, dtype=np.float32))


SIZE_TTL_S = 10.0  # how long the table's size estimate is trusted
# The store's model tag (engine/embedding/tag.py), an untagged store's being the default model's.
_TAG = f"coalesce((SELECT value FROM meta WHERE key = 'vector_model'), '{DEFAULT_MODEL.id}')"
NEXT = "memory_vectors_next"  # a reembed's new vector table, built before its switch (prepare_switch)
# The staged vectors with their memories' filter fields, as the vector table holds them.
_STAGED = (
    "SELECT s.memory_id, s.embedding, m.tier, m.kind, m.category, coalesce(m.agent, '') AS agent,"
    ' coalesce(m."user", \'\') AS "user" FROM vector_staging s JOIN memories m ON m.id = s.memory_id'
)

TAG = _TAG  # feed.py reads it with the log's head (one statement per recall's catch-up)
MODEL_MEMO = "vector_model"  # the tag as a read snapshot's catch-up read it (feed.py)


class PgVectorStore:
    def __init__(
        self,
        reader: Callable[[], AbstractContextManager[PgConnection]],
        *,
        exact_below: int = 10_000,
        ef_search: int = 100,
        hnsw: bool = True,
    ) -> None:
        self._reader = reader  # the store's snapshot reader
        self.exact_below = exact_below
        self.ef_search = ef_search
        self.hnsw = hnsw  # False: pgvector < 0.8 (no iterative scan): always exact
        self._size: tuple[float, int] = (0.0, 0)
        self.last_path = ""  # "exact" or "hnsw": what the last knn did (tests, benches)
        self.iterative = "relaxed_order"  # hnsw.iterative_scan ("off": what it is for, in a test)

    def _estimated(self, conn: Connection) -> int:
        at, n = self._size
        if time.monotonic() - at > SIZE_TTL_S:
            row = conn.execute(
                "SELECT reltuples FROM pg_class WHERE oid = 'memory_vectors'::regclass"
            ).fetchone()
            n = max(0, int(row[0])) if row else 0  # -1: never counted (new, small)
            self._size = (time.monotonic(), n)
        return n

    def use_hnsw(self, conn: Connection, where: str = "TRUE", params: Sequence[Any] = ()) -> bool:
        """Past the threshold, and only when the filter keeps at least as many rows as the
        threshold (the planner's estimate): a selective filter is cheaper scanned exactly than
        walked through the graph (bench/pg_vectors.py: 10% of 100k, 14 ms exact vs 18 ms HNSW at
        recall 0.98; 1% without the agent btree, 196 ms exact vs 546 ms HNSW)."""
        if not self.hnsw or self._estimated(conn) < self.exact_below:
            return False
        if where.strip().upper() == "TRUE":
            return True
        plan = conn.execute(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM memory_vectors WHERE {where}", params)
        doc = plan.fetchone()[0]
        rows = (doc if isinstance(doc, list) else json.loads(doc))[0]["Plan"]["Plan Rows"]
        return float(rows) >= self.exact_below

    def put(
        self,
        conn: Connection,
        memory_id: int,
        embedding: bytes,
        tier: str,
        kind: str,
        category: str,
        agent: str,
        user: str,
        model: str | None = None,
    ) -> bool:
        # With `model`, stored only while the store's tag names it: the same statement reads the
        # tag, after any switch this write waited for (its lock on memories) committed.
        cur = conn.execute(
            'INSERT INTO memory_vectors(memory_id, embedding, tier, kind, category, agent, "user")'
            " SELECT %s, %s, %s, %s, %s, %s, %s"
            + ("" if model is None else f" WHERE {_TAG} = %s")
            + " ON CONFLICT (memory_id) DO UPDATE SET"
            " embedding = excluded.embedding, tier = excluded.tier, kind = excluded.kind,"
            ' category = excluded.category, agent = excluded.agent, "user" = excluded."user"',
            (
                memory_id,
                _vec(embedding),
                tier,
                kind,
                category,
                agent,
                user,
                *(() if model is None else (model,)),
            ),
        )
        return cur.rowcount != 0

    def model_of(self, conn: Connection) -> str:
        # Inside a read snapshot the feed's catch-up read it (same snapshot, so the same answer).
        memo = getattr(conn, "snapshot", None)
        if memo is not None and MODEL_MEMO in memo:
            return str(memo[MODEL_MEMO])
        tag = str(conn.execute(f"SELECT {_TAG}").fetchone()[0])
        if memo is not None:
            memo[MODEL_MEMO] = tag
        return tag

    def delete(self, conn: Connection, memory_ids: Sequence[int]) -> None:
        if memory_ids:
            conn.execute("DELETE FROM memory_vectors WHERE memory_id = ANY(%s)", [list(memory_ids)])

    def knn(
        self, conn: Connection, query: bytes, k: int, filters: MemoryFilter, model: str | None = None
    ) -> list[tuple[int, float]]:
        q = _vec(query)
        where, params = render(filters)
        hnsw = self.use_hnsw(conn, where, params)
        if model is not None:  # no rows unless the store's tag names the query's model (same snapshot)
            where, params = f"({where}) AND {_TAG} = %s", [*params, model]
        if hnsw:
            raw = raw_of(conn)
            if raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                # SET LOCAL needs a transaction: no session state (a transaction-mode pooler).
                with raw.transaction():
                    return self.knn(conn, query, k, filters, model)
            self.last_path = "hnsw"
            ef = max(int(self.ef_search), min(int(k), 1000))
            # Filtered HNSW scans go on until k rows pass (pgvector >= 0.8, else never here).
            conn.execute(f"SET LOCAL hnsw.ef_search = {ef}; SET LOCAL hnsw.iterative_scan = {self.iterative}")
            # The scan's first ef rows that pass the filter, re-sorted exactly, then k: with a
            # filter, the first k passing rows of a relaxed-order scan miss a quarter of the true
            # top 10 at 100k (bench/pg_vectors.py); ef of them do not.
            rows = conn.execute(
                "WITH c AS MATERIALIZED (SELECT memory_id, embedding <=> %s AS d FROM memory_vectors WHERE "
                + where
                + " ORDER BY embedding <=> %s LIMIT %s)"
                " SELECT memory_id, d FROM c ORDER BY d, memory_id LIMIT %s",
                [q, *params, q, max(ef, int(k)), int(k)],
            ).fetchall()
        else:
            self.last_path = "exact"
            # `+ 0` keeps the planner off the HNSW index: below the threshold a scan is exact.
            rows = conn.execute(
                "SELECT memory_id, (embedding <=> %s) + 0 AS d FROM memory_vectors WHERE "
                + where
                + " ORDER BY d, memory_id LIMIT %s",
                [q, *params, int(k)],
            ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def distances(self, conn: Connection, query: bytes, ids: Sequence[int]) -> list[tuple[int, float]]:
        if not ids:
            return []
        rows = conn.execute(
            "SELECT memory_id, embedding <=> %s FROM memory_vectors WHERE memory_id = ANY(%s)",
            [_vec(query), list(ids)],
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def count_closer(self, conn: Connection, query: bytes, distance: float, filters: MemoryFilter) -> int:
        where, params = render(filters)
        row = conn.execute(
            f"SELECT count(*) FROM memory_vectors WHERE {where} AND (embedding <=> %s) < %s",
            [*params, _vec(query), distance],
        ).fetchone()
        return int(row[0])

    def embedding(self, conn: Connection, memory_id: int) -> bytes | None:
        row = conn.execute(
            f"SELECT {sent('embedding')} FROM memory_vectors WHERE memory_id = %s", [memory_id]
        ).fetchone()
        return None if row is None else blob_of(row[0])

    def entries(self, conn: Connection, ids: Sequence[int]) -> list[Any]:
        if not ids:
            return []
        rows = conn.execute(
            f'SELECT memory_id, {sent("embedding")}, tier, kind, category, agent, "user" FROM memory_vectors'
            " WHERE memory_id = ANY(%s)",
            [list(ids)],
        ).fetchall()
        # In the order of `ids`, as the SQLite store answers (heap order moves with updates).
        at = {int(r[0]): r for r in rows}
        return [(r[0], blob_of(r[1]), *r[2:]) for i in dict.fromkeys(int(x) for x in ids) if (r := at.get(i))]

    def scan(self, conn: Connection, batch: int = 4096) -> Iterator[list[Any]]:
        rows = conn.execute(
            f"SELECT memory_id, {sent('embedding')} FROM memory_vectors ORDER BY memory_id"
        ).fetchall()
        for i in range(0, len(rows), batch):
            yield [(r[0], blob_of(r[1])) for r in rows[i : i + batch]]

    def reader(self, path: Path) -> AbstractContextManager[PgConnection]:
        return self._reader()

    def prepare_switch(self, write: Callable[[Callable[[Connection], object]], object], dim: int) -> None:
        """Before a reembed's switch, outside it: the new vector table built whole from the staged
        vectors, its HNSW index with it, in writes of their own. Nobody else writes that table, so
        the seconds an HNSW build takes (100k) block no writer and no search; the switch then only
        catches up what changed since and swaps the tables (`switch`)."""
        d = int(dim)

        def build(conn: Connection) -> None:
            conn.execute(f"DROP TABLE IF EXISTS {NEXT}")
            conn.execute(
                f"CREATE TABLE {NEXT} (memory_id bigint PRIMARY KEY, embedding vector({d}) NOT NULL,"
                ' tier text, kind text, category text, agent text, "user" text)'
            )
            conn.execute(
                f'INSERT INTO {NEXT}(memory_id, embedding, tier, kind, category, agent, "user") {_STAGED}'
            )
            conn.execute(f"CREATE INDEX {NEXT}_hnsw ON {NEXT} USING hnsw (embedding vector_cosine_ops)")
            conn.execute(f"CREATE INDEX {NEXT}_agent ON {NEXT}(agent)")
            conn.execute(f"ANALYZE {NEXT}")  # the planner's count (vector.py's threshold) comes along

        write(build)
        # Its own short write: the key takes a lock on memories that would stall writers for the
        # whole build above. NOT VALID skips the scan; deletes cascade from now on.
        write(
            lambda conn: conn.execute(
                f"ALTER TABLE {NEXT} ADD CONSTRAINT memory_vectors_memory_id_fkey FOREIGN KEY (memory_id)"
                " REFERENCES memories(id) ON DELETE CASCADE NOT VALID"
            )
        )

    def switch(self, conn: Connection, dim: int) -> int:
        self._size = (0.0, 0)  # the planner's count is stale: read it again
        if self._prepared(conn, dim):
            return self._swap(conn)
        # Not prepared (a caller of the port without prepare_switch): the table stays (its GRANTs),
        # emptied, retyped to the new width, refilled, and its HNSW index built again over the
        # new vectors, all inside this write (writers of vectors wait for the build).
        conn.execute("DROP INDEX IF EXISTS memory_vectors_hnsw")
        conn.execute("DELETE FROM memory_vectors")
        conn.execute(f"ALTER TABLE memory_vectors ALTER COLUMN embedding TYPE vector({int(dim)})")
        n = conn.execute(
            'INSERT INTO memory_vectors(memory_id, embedding, tier, kind, category, agent, "user") ' + _STAGED
        ).rowcount
        conn.execute(
            "CREATE INDEX IF NOT EXISTS memory_vectors_hnsw ON memory_vectors"
            " USING hnsw (embedding vector_cosine_ops)"
        )
        return int(n)

    @staticmethod
    def _prepared(conn: Connection, dim: int) -> bool:
        row = conn.execute(
            "SELECT a.atttypmod FROM pg_attribute a WHERE a.attrelid = to_regclass(%s)"
            " AND a.attname = 'embedding' AND NOT a.attisdropped",
            [NEXT],
        ).fetchone()
        return row is not None and int(row[0]) == int(dim)

    def _swap(self, conn: Connection) -> int:
        # Writers lock memories, then memory_vectors: the same order here, so no deadlock. From
        # here to commit, writers of memories wait (the catch-up below, then renames); searches
        # read the old vectors until the commit.
        conn.execute("LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE")
        conn.execute("LOCK TABLE memory_vectors IN EXCLUSIVE MODE")
        # A memory written before these locks by a process that had not seen the reembed has no
        # staged vector: it waits for the backfill (the store's new model), never keeps an old one.
        conn.execute(
            "UPDATE memories m SET embedded = 0 WHERE embedded = 1"
            " AND NOT EXISTS (SELECT 1 FROM vector_staging s WHERE s.memory_id = m.id)"
        )
        # What changed since the build: vectors staged or dropped, filter fields edited.
        conn.execute(
            f"DELETE FROM {NEXT} n WHERE NOT EXISTS"
            " (SELECT 1 FROM vector_staging s WHERE s.memory_id = n.memory_id)"
        )
        conn.execute(
            f'INSERT INTO {NEXT} AS n (memory_id, embedding, tier, kind, category, agent, "user")'
            f" SELECT * FROM ({_STAGED}) x WHERE NOT EXISTS"
            f" (SELECT 1 FROM {NEXT} o WHERE o.memory_id = x.memory_id"
            ' AND o.embedding = x.embedding AND (o.tier, o.kind, o.category, o.agent, o."user")'
            ' IS NOT DISTINCT FROM (x.tier, x.kind, x.category, x.agent, x."user"))'
            " ON CONFLICT (memory_id) DO UPDATE SET embedding = excluded.embedding, tier = excluded.tier,"
            " kind = excluded.kind, category = excluded.category, agent = excluded.agent,"
            ' "user" = excluded."user"'
        )
        # The old table's GRANTs, given again on the new one (roles are database roles: operators.py).
        grants = conn.execute(
            "SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END, a.privilege_type"
            " FROM pg_class c, aclexplode(c.relacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee"
            " WHERE c.oid = 'memory_vectors'::regclass AND a.grantee <> c.relowner"
        ).fetchall()
        for who, what in grants:
            conn.execute(f"GRANT {what} ON {NEXT} TO {who}")
        conn.execute("DROP TABLE memory_vectors")
        conn.execute(f"ALTER TABLE {NEXT} RENAME TO memory_vectors")
        conn.execute(f"ALTER INDEX {NEXT}_pkey RENAME TO memory_vectors_pkey")
        conn.execute(f"ALTER INDEX {NEXT}_hnsw RENAME TO memory_vectors_hnsw")
        conn.execute(f"ALTER INDEX {NEXT}_agent RENAME TO memory_vectors_agent")
        return int(conn.execute("SELECT count(*) FROM memory_vectors").fetchone()[0])

    def after_switch(self, write: Callable[[Callable[[Connection], object]], object]) -> None:
        """After the switch committed: the key's check over the swapped rows (no writer waits)."""
        write(
            lambda conn: conn.execute(
                "ALTER TABLE memory_vectors VALIDATE CONSTRAINT memory_vectors_memory_id_fkey"
            )
        )

    def drop_prepared(self, conn: Connection) -> None:
        """A reembed given up: the new table, if one was built, goes with the staged vectors."""
        conn.execute(f"DROP TABLE IF EXISTS {NEXT}")
