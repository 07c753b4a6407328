"""sqlite-vec behind the vector store (engine/storage/indexes.py): the vec0 table `memories_vec`,
one float32 embedding per memory with tier/kind/category/agent/user as metadata columns, so a
filtered KNN still returns k rows (sqlite-vec issues #152, #196). The SQLite here is 3.40: KNN
takes `k = ?`, not LIMIT."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine.sql import chunked, marks


class SqliteVectorStore:
    def put(
        self,
        conn: Any,
        memory_id: int,
        embedding: bytes,
        tier: str,
        kind: str,
        category: str,
        agent: str,
        user: str,
    ) -> None:
        # vec0 has no upsert: replace by delete + insert.
        conn.execute("DELETE FROM memories_vec WHERE memory_id = ?", (memory_id,))
        conn.execute(
            "INSERT INTO memories_vec(memory_id, embedding, tier, kind, category, agent, user)"
            " VALUES (?,?,?,?,?,?,?)",
            (memory_id, embedding, tier, kind, category, agent, user),
        )

    def delete(self, conn: Any, memory_ids: Sequence[int]) -> None:
        for part in chunked(memory_ids):
            conn.execute(f"DELETE FROM memories_vec WHERE memory_id IN ({marks(len(part))})", part)

    def knn(
        self, conn: Any, query: bytes, k: int, where: str, params: Sequence[Any]
    ) -> list[tuple[int, float]]:
        rows = conn.execute(
            "SELECT memory_id, distance FROM memories_vec WHERE embedding MATCH ? AND k = ? AND "
            + where
            + " ORDER BY distance",
            [query, int(k), *params],
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def distances(self, conn: Any, query: bytes, ids: Sequence[int]) -> list[tuple[int, float]]:
        if not ids:
            return []
        rows = conn.execute(
            f"SELECT memory_id, vec_distance_cosine(embedding, ?) FROM memories_vec "
            f"WHERE memory_id IN ({marks(len(ids))})",
            [query, *ids],
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def count_closer(
        self, conn: Any, query: bytes, distance: float, where: str, params: Sequence[Any]
    ) -> int:
        row = conn.execute(
            f"SELECT count(*) FROM memories_vec WHERE {where} AND vec_distance_cosine(embedding, ?) < ?",
            [*params, query, distance],
        ).fetchone()
        return int(row[0])

    def embedding(self, conn: Any, memory_id: int) -> bytes | None:
        row = conn.execute("SELECT embedding FROM memories_vec WHERE memory_id = ?", (memory_id,)).fetchone()
        return None if row is None else row[0]

    def entries(self, conn: Any, ids: Sequence[int]) -> list[Any]:
        rows: list[Any] = []
        for part in chunked(ids):
            rows += conn.execute(
                "SELECT memory_id, embedding, tier, kind, category, agent, user FROM memories_vec "
                f"WHERE memory_id IN ({marks(len(part))})",
                part,
            ).fetchall()
        return rows

    def scan(self, conn: Any, batch: int = 4096) -> Iterator[list[Any]]:
        cur = conn.execute("SELECT memory_id, embedding FROM memories_vec")
        while True:
            rows = cur.fetchmany(batch)
            if not rows:
                return
            yield rows

    @contextmanager
    def reader(self, path: Path) -> Iterator[Any]:
        from engine.storage.sqlite.store import connect

        conn = connect(path)
        try:
            conn.execute("BEGIN")
            yield conn
            conn.execute("COMMIT")
        finally:
            conn.close()
