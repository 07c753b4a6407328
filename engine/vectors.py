"""The vector side of memory: storing vectors and nearest-neighbour search with filters.

vec0 holds one float32 vector per memory, with the filter fields as metadata columns so a
filtered KNN still returns k rows. Distances are cosine distances; similarity = 1 - distance.
"""
from __future__ import annotations

import numpy as np

from .filters import Filters


def blob(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype=np.float32).tobytes()


class VectorIndex:
    def __init__(self, store) -> None:
        self.store = store

    # -- writes (inside the caller's transaction) ---------------------------------------------
    def put(self, conn, memory_id: int, vec: np.ndarray, row) -> None:
        conn.execute("DELETE FROM memories_vec WHERE memory_id = ?", (memory_id,))
        conn.execute(
            "INSERT INTO memories_vec(memory_id, embedding, tier, kind, category, agent, user)"
            " VALUES (?,?,?,?,?,?,?)",
            (memory_id, blob(vec), row["tier"], row["kind"], row["category"],
             row["agent"] or "", row["user"] or ""))
        conn.execute("UPDATE memories SET embedded = 1 WHERE id = ?", (memory_id,))

    # -- reads ---------------------------------------------------------------------------------
    def knn(self, q: np.ndarray, k: int, filters: Filters, conn=None) -> list[tuple[int, float]]:
        """Top-k (memory_id, cosine similarity) among memories passing `filters`."""
        where, params = filters.sql()
        sql = ("SELECT memory_id, distance FROM memories_vec WHERE embedding MATCH ? AND k = ? AND "
               + where + " ORDER BY distance")
        args = [blob(q), int(k), *params]
        if conn is not None:
            rows = conn.execute(sql, args).fetchall()
        else:
            rows = self.store.read(sql, args)
        return [(int(r[0]), 1.0 - float(r[1])) for r in rows]

    def similarities(self, q: np.ndarray, ids: list[int]) -> dict[int, float]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.store.read(
            f"SELECT memory_id, vec_distance_cosine(embedding, ?) FROM memories_vec "
            f"WHERE memory_id IN ({marks})", [blob(q), *ids])
        return {int(r[0]): 1.0 - float(r[1]) for r in rows}

    def rank_of(self, q: np.ndarray, memory_id: int, filters: Filters) -> tuple[int | None, float | None]:
        """Full rank (1-based) of one memory by similarity among those passing `filters`."""
        sim = self.similarities(q, [memory_id]).get(memory_id)
        if sim is None:
            return None, None
        where, params = filters.sql()
        row = self.store.read_one(
            f"SELECT count(*) FROM memories_vec WHERE {where} AND "
            f"vec_distance_cosine(embedding, ?) < ?", [*params, blob(q), 1.0 - sim])
        return int(row[0]) + 1, sim

    def vector_of(self, memory_id: int) -> np.ndarray | None:
        row = self.store.read_one("SELECT embedding FROM memories_vec WHERE memory_id = ?", (memory_id,))
        return None if row is None else np.frombuffer(row[0], dtype=np.float32).copy()
