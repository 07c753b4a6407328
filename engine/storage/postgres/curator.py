"""PostgreSQL's side of the curator's scan (engine/storage/curator.py): every stored vector of
`memory_vectors` (vector.py) read in one query."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.storage.postgres.vector_wire import array_of, sent

if TYPE_CHECKING:
    from engine.storage.port import Connection


class PgCuratorReads:
    """The curator's scan: every stored vector as one float32 matrix, in id order."""

    def all_vectors(self, conn: Connection) -> tuple[np.ndarray, np.ndarray] | None:
        rows = conn.execute(
            f"SELECT memory_id, {sent('embedding')} FROM memory_vectors ORDER BY memory_id"
        ).fetchall()
        if not rows:
            return None
        ids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
        mat = np.vstack([array_of(r[1]) for r in rows])
        return ids, mat
