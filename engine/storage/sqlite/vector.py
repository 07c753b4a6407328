"""sqlite-vec behind the vector store (engine/storage/indexes.py): the vec0 table `memories_vec`,
one float32 embedding per memory with tier/kind/category/agent/user as metadata columns, so a
filtered KNN still returns k rows (sqlite-vec issues #152, #196). The SQLite here is 3.40: KNN
takes `k = ?`, not LIMIT."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.embedding.registry import DEFAULT_MODEL
from engine.storage.indexes import MemoryFilter
from engine.storage.sqlite.filters import where as render

if TYPE_CHECKING:
    from engine.storage.port import Connection

# vec0's metadata columns in declaration order (schema.py): memories_vec_metadatachunks00..04.
FILTER_FIELDS = ("tier", "kind", "category", "agent", "user")
# sqlite-vec 0.1 stores a TEXT metadata value per row in its chunk's blob as 16 bytes: the length
# (int32) and the first 12 bytes; longer values live whole in memories_vec_metadatatextNN too.
SLOT = np.dtype([("n", "<i4"), ("s", "S12")])
PREFIX = 12


def _tag(conn: Connection) -> str:
    """The store's model tag (engine/embedding/tag.py), an untagged store's being the default's."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'vector_model'").fetchone()
    return str(row[0]) if row and row[0] else DEFAULT_MODEL.id


class SqliteVectorStore:
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
        # With `model`, stored only while the store's tag names it (one writer at a time: the tag
        # read in this write is the one it commits against).
        if model is not None and _tag(conn) != model:
            return False
        # vec0 has no upsert: replace by delete + insert.
        conn.execute("DELETE FROM memories_vec WHERE memory_id = ?", (memory_id,))
        conn.execute(
            "INSERT INTO memories_vec(memory_id, embedding, tier, kind, category, agent, user)"
            " VALUES (?,?,?,?,?,?,?)",
            (memory_id, embedding, tier, kind, category, agent, user),
        )
        return True

    def model_of(self, conn: Connection) -> str:
        return _tag(conn)

    def delete(self, conn: Connection, memory_ids: Sequence[int]) -> None:
        # Point deletes: vec0 scans every chunk for `memory_id IN (...)` (see entries()).
        conn.executemany(
            "DELETE FROM memories_vec WHERE memory_id = ?", ((i,) for i in dict.fromkeys(memory_ids))
        )

    def set_filters(
        self, conn: Connection, rows: Sequence[Sequence[Any]], fields: Sequence[str] = FILTER_FIELDS
    ) -> int:
        """Give many stored vectors new filter fields at once: rows of (memory_id, then a value
        per name in `fields`: all of tier, kind, category, agent, user by default); ids without a
        vector are skipped, fields not named are left as they are. Returns how many it set.

        Through vec0 each row's metadata update costs ~1 ms here (60,000 archived at once: over a
        minute). Short values are written straight into vec0's metadata chunk blobs instead, one
        read and at most one write per chunk and column, rows located from the chunks' own rowid
        lists; the layout is checked against vec0 itself first, and whatever that does not cover
        (a long value, a surprise) goes through vec0 row by row."""
        if not rows:
            return 0
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        ids_sorted = ids[order]
        located = self._locate(conn, ids_sorted, order)  # [(chunk_id, offsets, row indexes)]
        found = sum(len(o) for _, o, _ in located)
        slow: list[int] = []
        if located and self._layout_ok(conn, int(rows[located[0][2][0]][0]), located[0][0], located[0][1][0]):
            long_rows: set[int] = set()
            for pos, name in enumerate(fields):
                long_rows |= self._write_column(conn, FILTER_FIELDS.index(name), pos, rows, located)
            slow = sorted(long_rows)
        else:
            slow = [int(i) for _, _, idx in located for i in idx]
        assign = ", ".join(f"{name} = ?" for name in fields)
        for i in slow:
            r = rows[i]
            conn.execute(
                f"UPDATE memories_vec SET {assign} WHERE memory_id = ?",
                (*(v or "" for v in r[1 : 1 + len(fields)]), int(r[0])),
            )
        return found

    @staticmethod
    def _locate(
        conn: Connection, ids_sorted: np.ndarray, order: np.ndarray
    ) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Where each id sits in vec0: per chunk, the offsets and the indexes into the caller's
        rows (from each chunk's rowid list and validity bits: ~1,000 small rows at 1M)."""
        out = []
        for chunk_id, size, validity, rowids in conn.execute(
            "SELECT chunk_id, size, validity, rowids FROM memories_vec_chunks"
        ):
            size = int(size)
            rid = np.frombuffer(rowids, dtype=np.int64)[:size]
            valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[: len(rid)]
            pos = np.minimum(np.searchsorted(ids_sorted, rid), len(ids_sorted) - 1)
            hit = (ids_sorted[pos] == rid) & (valid[: len(rid)] == 1)
            offs = np.flatnonzero(hit)
            if len(offs):
                out.append((int(chunk_id), offs, order[pos[offs]]))
        return out

    @staticmethod
    def _layout_ok(conn: Connection, mid: int, chunk: int, offset: int) -> bool:
        """Whether one row's fields decoded from the chunk blobs equal what vec0 itself returns."""
        try:
            got = conn.execute(
                "SELECT tier, kind, category, agent, user FROM memories_vec WHERE memory_id = ?", (mid,)
            ).fetchone()
            if got is None:
                return False
            for c, value in enumerate(got):
                blob = conn.execute(
                    f"SELECT data FROM memories_vec_metadatachunks{c:02d} WHERE rowid = ?", (chunk,)
                ).fetchone()
                if (
                    blob is None
                    or len(blob[0]) % SLOT.itemsize
                    or len(blob[0]) < (offset + 1) * SLOT.itemsize
                ):
                    return False
                slot = np.frombuffer(blob[0], dtype=SLOT)[offset]
                raw = (value or "").encode()
                if int(slot["n"]) != len(raw) or bytes(slot["s"]) != raw[:PREFIX]:
                    return False
        except Exception:  # another sqlite-vec layout: the caller goes through vec0
            return False
        return True

    @staticmethod
    def _write_column(
        conn: Connection,
        c: int,
        pos: int,
        rows: Sequence[Sequence[Any]],
        located: list[tuple[int, np.ndarray, np.ndarray]],
    ) -> set[int]:
        """Write vec0's metadata column `c` from value `pos` of `rows` into its chunk blobs, one
        write per chunk where something changes; returns the indexes of rows whose value changes
        and is too long for the blob alone (left for vec0)."""
        table, text = f"memories_vec_metadatachunks{c:02d}", f"memories_vec_metadatatext{c:02d}"
        values = [r[1 + pos] or "" for r in rows]
        distinct = {v: i for i, v in enumerate(dict.fromkeys(values))}  # a handful of values
        if len(distinct) == 1:
            codes = np.zeros(len(values), dtype=np.int64)
        else:
            codes = np.fromiter(map(distinct.__getitem__, values), dtype=np.int64, count=len(values))
        raw = [v.encode() for v in distinct]
        n_of = np.array([len(r) for r in raw], dtype=np.int32)
        s_of = np.array(raw, dtype="S12")  # the first 12 bytes
        long_rows: set[int] = set()
        for chunk, offs, idx in located:
            got = conn.execute(f"SELECT data FROM {table} WHERE rowid = ?", (chunk,)).fetchone()
            data = np.frombuffer(got[0], dtype=SLOT).copy()
            old = data[offs]
            code = codes[idx]
            n_new, s_new = n_of[code], s_of[code]
            differs = (old["n"] != n_new) | (old["s"] != s_new)
            long = (n_new > PREFIX) | (old["n"] > PREFIX)
            for i in np.flatnonzero(long).tolist():
                row = int(idx[i])
                full = conn.execute(
                    f"SELECT data FROM {text} WHERE rowid = ?", (int(rows[row][0]),)
                ).fetchone()
                if bool(differs[i]) or full is None or full[0] != values[row]:
                    long_rows.add(row)
            put = differs & ~long
            if put.any():
                data["n"][offs[put]] = n_new[put]
                data["s"][offs[put]] = s_new[put]
                conn.execute(f"UPDATE {table} SET data = ? WHERE rowid = ?", (data.tobytes(), chunk))
        return long_rows

    def knn(
        self, conn: Connection, query: bytes, k: int, filters: MemoryFilter, model: str | None = None
    ) -> list[tuple[int, float]]:
        if model is not None and _tag(conn) != model:  # the caller's snapshot: the vectors read next
            return []
        where, params = render(filters)
        rows = conn.execute(
            "SELECT memory_id, distance FROM memories_vec WHERE embedding MATCH ? AND k = ? AND "
            + where
            + " ORDER BY distance",
            [query, int(k), *params],
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def distances(self, conn: Connection, query: bytes, ids: Sequence[int]) -> list[tuple[int, float]]:
        if not ids:
            return []
        sql = "SELECT memory_id, vec_distance_cosine(embedding, ?) FROM memories_vec WHERE memory_id = ?"
        rows = (conn.execute(sql, (query, i)).fetchone() for i in dict.fromkeys(ids))
        return [(int(r[0]), float(r[1])) for r in rows if r is not None]

    def count_closer(self, conn: Connection, query: bytes, distance: float, filters: MemoryFilter) -> int:
        where, params = render(filters)
        row = conn.execute(
            f"SELECT count(*) FROM memories_vec WHERE {where} AND vec_distance_cosine(embedding, ?) < ?",
            [*params, query, distance],
        ).fetchone()
        return int(row[0])

    def embedding(self, conn: Connection, memory_id: int) -> bytes | None:
        row = conn.execute("SELECT embedding FROM memories_vec WHERE memory_id = ?", (memory_id,)).fetchone()
        return None if row is None else row[0]

    def entries(self, conn: Connection, ids: Sequence[int]) -> list[Any]:
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

    def scan(self, conn: Connection, batch: int = 4096) -> Iterator[list[Any]]:
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

    # One writer at a time and no index to build on vec0: the switch does it all in its write.
    def prepare_switch(self, write: Callable[[Callable[[Connection], object]], object], dim: int) -> None:
        return None

    def after_switch(self, write: Callable[[Callable[[Connection], object]], object]) -> None:
        return None

    def drop_prepared(self, conn: Connection) -> None:
        return None

    def switch(self, conn: Connection, dim: int) -> int:
        # vec0 cannot change a column's width: the table is made anew (the triggers on memories
        # name it, and find the new one).
        from engine.storage.sqlite.schema import vec_table

        conn.execute("DROP TABLE memories_vec")
        conn.execute(vec_table(dim))
        return int(
            conn.execute(
                "INSERT INTO memories_vec(memory_id, embedding, tier, kind, category, agent, user)"
                " SELECT s.memory_id, s.embedding, m.tier, m.kind, m.category, coalesce(m.agent, ''),"
                " coalesce(m.user, '') FROM vector_staging s JOIN memories m ON m.id = s.memory_id"
                " ORDER BY s.memory_id"
            ).rowcount
        )
