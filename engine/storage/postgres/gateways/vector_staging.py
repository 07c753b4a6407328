"""`vector_staging` rows in PostgreSQL's SQL (pgvector `vector` of any width)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pgvector import Vector

from engine.storage.gateways.vector_staging import VectorStagingRows


class PgVectorStagingRows(VectorStagingRows):
    def put_many(self, rows: Sequence[tuple[int, bytes]]) -> None:
        if not rows:
            return
        # One statement for the batch: unnest of ids and vectors (no round trip per row).
        self.conn.execute(
            "INSERT INTO vector_staging(memory_id, embedding)"
            " SELECT i, v FROM unnest(%s::bigint[], %s::vector[]) AS t(i, v)"
            " ON CONFLICT (memory_id) DO UPDATE SET embedding = excluded.embedding",
            [[int(i) for i, _ in rows], [Vector(np.frombuffer(b, dtype=np.float32)) for _, b in rows]],
        )

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM vector_staging").fetchone()[0])

    def missing(self, limit: int) -> list[tuple[int, str]]:
        rows = self.conn.execute(
            "SELECT id, content FROM memories m WHERE NOT EXISTS"
            " (SELECT 1 FROM vector_staging s WHERE s.memory_id = m.id) ORDER BY id LIMIT %s",
            [int(limit)],
        ).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def missing_count(self) -> int:
        return int(
            self.conn.execute(
                "SELECT count(*) FROM memories m WHERE NOT EXISTS"
                " (SELECT 1 FROM vector_staging s WHERE s.memory_id = m.id)"
            ).fetchone()[0]
        )

    def clear(self) -> None:
        self.conn.execute("DELETE FROM vector_staging")
