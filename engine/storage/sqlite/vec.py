"""sqlite-vec behind the vector store (engine/storage/indexes.py): the vec0 table `memories_vec`,
one float32 embedding per memory with tier/kind/category/agent/user as metadata columns, so a
filtered KNN still returns k rows (sqlite-vec issues #152, #196). The SQLite here is 3.40: KNN
takes `k = ?`, not LIMIT."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


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
        # Point deletes: vec0 scans every chunk for `memory_id IN (...)` (see entries()).
        conn.executemany(
            "DELETE FROM memories_vec WHERE memory_id = ?", ((i,) for i in dict.fromkeys(memory_ids))
        )

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
        sql = "SELECT memory_id, vec_distance_cosine(embedding, ?) FROM memories_vec WHERE memory_id = ?"
        rows = (conn.execute(sql, (query, i)).fetchone() for i in dict.fromkeys(ids))
        return [(int(r[0]), float(r[1])) for r in rows if r is not None]

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
        # One point lookup per id: vec0 answers `memory_id = ?` from its rowid map but scans every
        # chunk for `IN (...)` (20 ids in a 100k table: 0.5 ms as points, 37 ms as one IN).
        sql = (
            "SELECT memory_id, embedding, tier, kind, category, agent, user FROM memories_vec"
            " WHERE memory_id = ?"
        )
        rows: list[Any] = []
        for i in dict.fromkeys(ids):
            row = conn.execute(sql, (i,)).fetchone()
            if row is not None:
                rows.append(row)
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
