"""The vector side of memory: storing vectors and nearest-neighbour search with filters.

The store's vector store (engine/storage/indexes.py: an adapter's vector table) holds one float32
vector per memory, with the filter fields beside it so a filtered KNN still returns k rows.
Distances are cosine distances; similarity = 1 - distance.

The embedded store's KNN is an exact brute-force scan (~0.7 ms per 1,000 vectors here). A
long-lived engine (the console, a bench, a big ingest) holds the vectors in memory instead
(`keep_in_memory()`, or automatically after `SearchSettings.matrix_after` vector searches): same
exact answers from one numpy product, kept in sync with every process's writes through the
`vector_changes` log.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.embedding import tag as model_tag
from engine.paths import is_server
from engine.retrieval.filters import Filters
from engine.retrieval.keyword_matrix import give_back_memory
from engine.retrieval.loading import Loader
from engine.retrieval.vector_matrix import VectorMatrix
from engine.retrieval.vector_order import ordered

if TYPE_CHECKING:
    from engine.embed import EmbedderHandle
    from engine.embedding.tag import ModelTag
    from engine.storage.indexes import VectorStore
    from engine.storage.port import Connection, Storage


def blob(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype=np.float32).tobytes()


class VectorIndex:
    def __init__(self, store: Storage, bits_from: int = 0, rescore: int = 2000) -> None:
        self.store = store
        self.matrix: VectorMatrix | None = None
        self.searches = 0
        self.bits_from, self.rescore = bits_from, rescore  # SearchSettings.bits_from / bits_rescore
        self.loader = Loader("vector-matrix-load", self._load, lambda: self.matrix is not None)
        self._tag: tuple[float, ModelTag] | None = None
        self.tag_ttl = 1.0  # seconds a read of the store's model tag is trusted (another process may switch)
        self.synced_at = 0.0  # time.monotonic() of the matrix's last catch-up (prepare_batch skips one)
        self.sync_every = 1.0  # seconds: a small write catches the matrix up first only past this
        self.matrix_model = ""  # the model whose vectors the matrix holds (read with them)

    # -- which model the vectors are (engine/embedding/tag.py) ------------------------------------------
    def tag(self, fresh: bool = False) -> ModelTag:
        """The store's model tag, read at most once per `tag_ttl` (a meta read: ~0.05 ms on SQLite)."""
        got = self._tag
        if fresh or got is None or time.monotonic() - got[0] > self.tag_ttl:
            got = (time.monotonic(), self.store.query(model_tag.read))
            self._tag = got
        return got[1]

    def follow_model(self, embedder: EmbedderHandle) -> None:
        """Before a vector search: if the store switched models (a reembed finished, here or in
        another process), drop a matrix of the old vectors and have the embedder load the new
        model (search is keyword-only, saying so, until it is ready)."""
        if not embedder.ready:
            return
        t = self.tag()
        m = self.matrix
        if m is not None and m.dim != t.dim:
            self.matrix = None
        embedder.follow(t)

    @property
    def backend(self) -> VectorStore:
        """The store's vector store (a part of the storage port)."""
        return self.store.vector_store

    # -- the in-memory matrix --------------------------------------------------------------------
    def keep_in_memory(self, background: bool = False) -> None:
        """Load every vector into memory and answer searches from there from now on. The load
        reads through its own connection, so a background load (seconds at 100k) never holds
        the engine's connection; searches use the vector store until it is done."""
        self.loader.start(background)

    def _load(self) -> None:
        # A file closed and removed meanwhile: nothing to load (a server has no file here).
        if not is_server(self.store.path) and not self.store.path.exists():
            return
        m = VectorMatrix(self.backend, self.store.feed, dim=self.tag(fresh=True).dim, bulk=self.store.curator)
        with self.backend.reader(self.store.path) as conn:
            self.matrix_model = self.backend.model_of(conn)  # the model of what it loads
            m.sync(conn)
        self._sync(m)  # whatever was written while it loaded
        self.matrix = m
        give_back_memory()

    def note_search(self, matrix_after: int) -> None:
        """Count a vector search; the `matrix_after`-th starts loading the matrix in the
        background (0: never automatically)."""
        self.searches += 1
        if self.matrix is None and matrix_after and self.searches >= matrix_after:
            self.keep_in_memory(background=True)

    def _sync(self, m: VectorMatrix) -> bool:
        """Catch the matrix up with the file in one read snapshot. Inside this process's own write
        transaction it must not (that write may still roll back): the caller falls back to SQL."""
        if self.store.in_write:
            return False
        with self.store.reading() as conn:
            # A reembed's switch logs every memory: whenever there were changes, the tag in the same
            # snapshot says whether the vectors are still the model the matrix holds.
            if m.sync(conn) and self.backend.model_of(conn) != self.matrix_model:
                if self.matrix is m:
                    self.matrix = None  # another model's vectors (same width): the SQL path, checked
                return False
        self.synced_at = time.monotonic()
        return True

    def _live_matrix(self) -> VectorMatrix | None:
        m = self.matrix
        if m is None or not self._sync(m):
            return None
        return m

    def live_matrix(self) -> VectorMatrix | None:
        """The matrix caught up with the database, or None (not loaded, or mid-write)."""
        return self._live_matrix()

    # -- writes (inside the caller's transaction) ---------------------------------------------
    def put(self, conn: Connection, memory_id: int, vec: np.ndarray, row: Any, marked: bool = False) -> None:
        """Store the memory's vector (filter fields from its `row`: a row or the NewMemory it was
        inserted from) and mark it embedded (`marked`: the insert already did, issue #24: one
        statement less per remember). A vector of another width than the store's model (this
        process had not yet seen a reembed's switch) is not stored: the memory stays unembedded
        and the backfill embeds it with the new model."""
        t = self.tag()
        stored = len(vec) == t.dim and self.backend.put(
            conn, memory_id, blob(vec), row["tier"], row["kind"], row["category"], row["agent"] or "",
            row["user"] or "", model=t.model,
        )  # fmt: skip
        # Not stored: another width, or the tag moved on inside this write (a switch of the same
        # width this process had not seen): the backfill embeds it with the store's model.
        if not stored:
            conn.memories.set_embedded(memory_id, False)
        elif not marked:
            conn.memories.set_embedded(memory_id, True)

    # -- reads ---------------------------------------------------------------------------------
    def knn(
        self, q: np.ndarray, k: int, filters: Filters, conn: Connection | None = None
    ) -> list[tuple[int, float]]:
        """Top-k (memory_id, cosine similarity) among memories passing `filters`."""
        m = self._live_matrix() if conn is None else None
        if m is not None:
            return m.knn(q, k, filters, self.bits_from, self.rescore)
        return self.knn_sql(q, k, filters, conn)

    def knn_sql(
        self, q: np.ndarray, k: int, filters: Filters, conn: Connection | None = None
    ) -> list[tuple[int, float]]:
        """The vector store's exact KNN (the plain approach, and the path without a matrix). Rows
        only while the store's tag (read in the vectors' snapshot) is the model this process
        embeds with: a switch of the same width never mixes two models' vectors in one answer."""
        want = self.tag().model
        if conn is not None:
            rows = self.backend.knn(conn, blob(q), int(k), filters, model=want)
        else:
            with self.store.reading() as c:
                rows = self.backend.knn(c, blob(q), int(k), filters, model=want)
        if not rows:
            self.tag(fresh=True)  # none: maybe a switch; the next search's follow_model sees it
        return ordered([(mid, 1.0 - d) for mid, d in rows])

    def similarities(self, q: np.ndarray, ids: list[int]) -> dict[int, float]:
        if not ids:
            return {}
        m = self._live_matrix()
        if m is not None:
            return m.similarities(q, ids)
        with self.store.reading() as conn:
            rows = self.backend.distances(conn, blob(q), ids)
        return {mid: 1.0 - d for mid, d in rows}

    def rank_of(self, q: np.ndarray, memory_id: int, filters: Filters) -> tuple[int | None, float | None]:
        """Full rank (1-based) of one memory by similarity among those passing `filters`."""
        m = self._live_matrix()
        if m is not None:
            return m.rank_of(q, memory_id, filters)
        sim = self.similarities(q, [memory_id]).get(memory_id)
        if sim is None:
            return None, None
        with self.store.reading() as conn:
            closer = self.backend.count_closer(conn, blob(q), 1.0 - sim, filters)
        return closer + 1, sim

    def vector_of(self, memory_id: int) -> np.ndarray | None:
        with self.store.reading() as conn:
            got = self.backend.embedding(conn, memory_id)
        return None if got is None else np.frombuffer(got, dtype=np.float32).copy()

    # -- near-duplicates for the write path ------------------------------------------------------------
    def prepare_batch(self, n_items: int, batched_from: int) -> None:
        """Before a write of `n_items` with dedup: a batch this big checks duplicates against the
        in-memory matrix (one product per batch) rather than one KNN scan per item."""
        if self.matrix is None and n_items >= batched_from:
            self.keep_in_memory()
        elif self.matrix is not None and (
            n_items >= batched_from or time.monotonic() - self.synced_at > self.sync_every
        ):
            # A small write need not catch up first (issue #24: a read snapshot, ~5 statements on
            # a server): best_matches reads what changed since the last sync inside the write. Past
            # `sync_every` it does, so a process that only writes never carries a growing backlog.
            self._sync(self.matrix)

    def best_matches(
        self,
        conn: Connection,
        vecs: np.ndarray,
        agents: list[str],
        tiers: tuple[str, ...] = ("core", "active"),
    ) -> list[tuple[int | None, float]]:
        """Inside a write transaction: for each vector, the most similar memory of its agent.
        Uses the matrix as of its last sync plus the rows logged since (read through `conn`, so
        another process's just-committed writes count); without a matrix, one KNN each."""
        m = self.matrix
        if m is None:
            out: list[tuple[int | None, float]] = []
            for v, a in zip(vecs, agents, strict=True):
                hit = self.knn_sql(v, 1, Filters(tiers=tiers, agent=a), conn=conn)
                out.append(hit[0] if hit else (None, -1.0))
            return out
        # (on a server one statement brings the changed ids with their vectors, issue #24)
        changed, entries = self.store.feed.changed_vectors(conn, m.seq)
        best = m.best_matches(vecs, agents, tiers, skip=set(changed))
        if changed:
            if entries is None:
                entries = self.backend.entries(conn, changed)
            # (memory_id, embedding, tier, kind, category, agent, user)
            rows = [r for r in entries if r[2] in tiers]
            if rows:
                mat = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
                sims = np.asarray(vecs, dtype=np.float32) @ mat.T
                same = np.array([[(r[5] or "") == (a or "") for r in rows] for a in agents])
                sims[~same] = -np.inf
                arg = sims.argmax(axis=1)
                for j, b in enumerate(arg):
                    if sims[j, b] > best[j][1]:
                        best[j] = (int(rows[b][0]), float(sims[j, b]))
        return best
