"""SQLite's side of the curator's scan (engine/storage/curator.py): every stored vector read from
vec0's own chunk tables in ~0.3 s per 100k instead of ~5 s row by row through the virtual table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.storage.sqlite.schema import EMBED_DIM

if TYPE_CHECKING:
    from engine.storage.port import Connection


class SqliteCuratorReads:
    def all_vectors(self, conn: Connection, dim: int = EMBED_DIM) -> tuple[np.ndarray, np.ndarray] | None:
        """The layout is sqlite-vec 0.1's (validity bitmap, int64 rowids, float32 vectors per
        chunk); it is checked against the table itself, and any surprise returns None so the
        caller takes the slow, always-correct path."""
        try:  # two plain scans: SQLite's join of these two tables costs seconds more
            chunks = {
                int(r[0]): r[1:]
                for r in conn.execute("SELECT chunk_id, size, validity, rowids FROM memories_vec_chunks")
            }
            # streamed, one chunk's blob at a time (all of them at once doubled the peak memory)
            blobs = conn.execute("SELECT rowid, vectors FROM memories_vec_vector_chunks00")
        except Exception:
            return None
        total = sum(int(c[0]) for c in chunks.values())
        mat = np.empty((total, dim), dtype=np.float32)  # filled once, in place
        all_ids = np.empty(total, dtype=np.int64)
        n = seen = 0
        for chunk_id, vectors in blobs:
            if int(chunk_id) not in chunks:
                return None
            size, validity, rowids = chunks[int(chunk_id)]
            seen += 1
            size = int(size)
            rid = np.frombuffer(rowids, dtype=np.int64)
            vec = np.frombuffer(vectors, dtype=np.float32)
            valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
            if len(rid) < size or vec.size < size * dim or len(valid) < size:
                return None
            keep = np.nonzero(valid[:size])[0]
            k = len(keep)
            if k == size:
                mat[n : n + k] = vec[: size * dim].reshape(size, dim)
                all_ids[n : n + k] = rid[:size]
            else:
                mat[n : n + k] = vec[: size * dim].reshape(size, dim)[keep]
                all_ids[n : n + k] = rid[keep]
            n += k
        if n == 0 or seen != len(chunks):
            return None
        all_ids, mat = all_ids[:n], mat[:n]
        expected = conn.execute("SELECT count(*) FROM memories WHERE embedded = 1").fetchone()[0]
        if len(all_ids) != expected:
            return None
        for i in (0, len(all_ids) // 2, len(all_ids) - 1):  # spot-check against vec0 itself
            row = conn.execute(
                "SELECT embedding FROM memories_vec WHERE memory_id = ?", (int(all_ids[i]),)
            ).fetchone()
            if row is None or row[0] != mat[i].tobytes():
                return None
        return all_ids, mat
