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

from engine.storage.indexes import MemoryFilter
from engine.storage.port import Connection
from engine.storage.postgres.connection import PgConnection, raw_of
from engine.storage.postgres.filters import where as render


def _vec(blob: bytes) -> Vector:
    return Vector(np.frombuffer(blob, dtype=np.float32))


def _blob(value: Any) -> bytes:
    return np.asarray(value.to_numpy() if isinstance(value, Vector) else value, dtype=np.float32).tobytes()


SIZE_TTL_S = 10.0  # how long the table's size estimate is trusted


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
    ) -> None:
        conn.execute(
            'INSERT INTO memory_vectors(memory_id, embedding, tier, kind, category, agent, "user")'
            " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (memory_id) DO UPDATE SET"
            " embedding = excluded.embedding, tier = excluded.tier, kind = excluded.kind,"
            ' category = excluded.category, agent = excluded.agent, "user" = excluded."user"',
            (memory_id, _vec(embedding), tier, kind, category, agent, user),
        )

    def delete(self, conn: Connection, memory_ids: Sequence[int]) -> None:
        if memory_ids:
            conn.execute("DELETE FROM memory_vectors WHERE memory_id = ANY(%s)", [list(memory_ids)])

    def knn(self, conn: Connection, query: bytes, k: int, filters: MemoryFilter) -> list[tuple[int, float]]:
        q = _vec(query)
        where, params = render(filters)
        if self.use_hnsw(conn, where, params):
            raw = raw_of(conn)
            if raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                # SET LOCAL needs a transaction: no session state (a transaction-mode pooler).
                with raw.transaction():
                    return self.knn(conn, query, k, filters)
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
            "SELECT embedding FROM memory_vectors WHERE memory_id = %s", [memory_id]
        ).fetchone()
        return None if row is None else _blob(row[0])

    def entries(self, conn: Connection, ids: Sequence[int]) -> list[Any]:
        if not ids:
            return []
        rows = conn.execute(
            'SELECT memory_id, embedding, tier, kind, category, agent, "user" FROM memory_vectors'
            " WHERE memory_id = ANY(%s)",
            [list(ids)],
        ).fetchall()
        # In the order of `ids`, as the SQLite store answers (heap order moves with updates).
        at = {int(r[0]): r for r in rows}
        return [(r[0], _blob(r[1]), *r[2:]) for i in dict.fromkeys(int(x) for x in ids) if (r := at.get(i))]

    def scan(self, conn: Connection, batch: int = 4096) -> Iterator[list[Any]]:
        rows = conn.execute("SELECT memory_id, embedding FROM memory_vectors ORDER BY memory_id").fetchall()
        for i in range(0, len(rows), batch):
            yield [(r[0], _blob(r[1])) for r in rows[i : i + batch]]

    def reader(self, path: Path) -> AbstractContextManager[PgConnection]:
        return self._reader()

    def switch(self, conn: Connection, dim: int) -> int:
        # The table stays (its GRANTs, its triggers): emptied, retyped to the new width, refilled,
        # and its HNSW index built again over the new vectors.
        conn.execute("DROP INDEX IF EXISTS memory_vectors_hnsw")
        conn.execute("DELETE FROM memory_vectors")
        conn.execute(f"ALTER TABLE memory_vectors ALTER COLUMN embedding TYPE vector({int(dim)})")
        n = conn.execute(
            'INSERT INTO memory_vectors(memory_id, embedding, tier, kind, category, agent, "user")'
            " SELECT s.memory_id, s.embedding, m.tier, m.kind, m.category, coalesce(m.agent, ''),"
            " coalesce(m.\"user\", '') FROM vector_staging s JOIN memories m ON m.id = s.memory_id"
        ).rowcount
        conn.execute(
            "CREATE INDEX IF NOT EXISTS memory_vectors_hnsw ON memory_vectors"
            " USING hnsw (embedding vector_cosine_ops)"
        )
        self._size = (0.0, 0)  # the planner's count is stale: read it again
        return int(n)
