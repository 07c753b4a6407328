"""Every vector of the file held in one float32 matrix, for long-lived engines (console, benches,
big ingests): exact cosine KNN as one matrix-vector product (~9 ms at 100k here against ~75 ms for
the SQLite vector index's brute-force scan), filters as numpy masks over per-row metadata codes.

It stays equal to the file through `vector_changes`, a log that triggers on `memories` append to
whenever a vector or a filter field changes or a memory is deleted (see schema.py). `sync()` reads
the log past the last sequence number it applied (one indexed lookup when nothing changed), so
writes from this process and from any other process are picked up before each search. If the log
was pruned past that point, or more changed than a reload costs, it reloads everything.

A load reads every vector the store's fast way when it has one (`CuratorReads.all_vectors`: on
SQLite the vector index's chunk tables in one sequential scan) and the filter fields in one query, then builds
the codes and sign bits with numpy: no Python work per row beyond the id map. The vector store's
row-by-row scan stays as the always-right fallback.
"""

from __future__ import annotations

import threading
from itertools import compress, repeat
from typing import TYPE_CHECKING, Literal

import numpy as np

from engine.batches import chunked
from engine.retrieval.filters import Filters
from engine.retrieval.sign_bits import hamming, pack, packed
from engine.retrieval.vector_order import ordered
from engine.storage.feed import VECTORS
from engine.storage.queries.memory import MATRIX_FIELDS

if TYPE_CHECKING:
    from engine.storage.curator import CuratorReads
    from engine.storage.indexes import VectorStore
    from engine.storage.port import ChangeFeed, Connection

FIELDS = MATRIX_FIELDS
RELOAD_FROM = 20_000  # changed ids past this (and past a quarter of the rows): reload, not apply
SEP = "\x1f"  # joins a row's filter fields in one string while loading (ASCII unit separator)


class VectorMatrix:
    def __init__(
        self, vectors: VectorStore, feed: ChangeFeed, dim: int = 384, bulk: CuratorReads | None = None
    ) -> None:
        self.dim = dim
        self.vectors = vectors  # where the embeddings are read from (the store's vector store)
        self.feed = feed  # the log of what changed, followed by sync()
        self.bulk = bulk  # every vector at once, the fast way (None: the vector store's scan)
        self.lock = threading.RLock()
        self._reset()
        feed.follow(self)  # the feed may read the changed vectors with its head (one statement)

    reads: Literal["vectors", "texts"] = VECTORS  # what the feed reads ahead for it (storage/feed.py)

    def _reset(self) -> None:
        dim = self.dim
        self.seq = -1  # last vector_changes.seq applied (-1: never loaded)
        self.n = 0  # rows in use (dead rows stay until compaction)
        self.mat = np.zeros((0, dim), dtype=np.float32)
        self.ids = np.zeros(0, dtype=np.int64)
        self.alive = np.zeros(0, dtype=bool)
        self.codes = {f: np.zeros(0, dtype=np.int32) for f in FIELDS}
        self.vocab: dict[str, dict[str, int]] = {f: {} for f in FIELDS}
        self.row: dict[int, int] = {}
        self.dead = 0
        self.bits = np.zeros((dim // 64, 0), dtype=np.uint64)  # sign bits, one row per 64 dims
        self._masks: dict = {}

    # -- keeping up with the file --------------------------------------------------------------
    def sync(self, conn: Connection) -> bool:
        """Apply what changed since the last sync. Returns True if anything did. Call it outside a
        write transaction (a rolled-back write must never reach the matrix)."""
        with self.lock:
            top, low = self.feed.head(conn)
            if self.seq == top:
                return False
            if self.seq < 0 or (low > self.seq + 1 and top > 0):
                self._load_all(conn)
                return True
            got = self.feed.caught_up(conn, self.seq)
            ahead = got.vectors if got is not None else None
            ids = got.changed(self.seq) if got is not None else self.feed.changed(conn, self.seq, top)
            if len(ids) > max(RELOAD_FROM, self.n // 4):  # e.g. after an archive burst
                self._load_all(conn)
                return True
            self._apply(conn, ids, ahead)
            self.seq = int(top)
            self._masks = {}
            if self.dead > 1024 and self.dead > self.n // 4:
                self._compact()
            return True

    def _load_all(self, conn: Connection) -> None:
        self._reset()
        top = self.feed.newest(conn)
        got = self.bulk.all_vectors(conn) if self.bulk is not None else None
        if got is not None and got[1].shape[1:] == (self.dim,) and self._load_bulk(conn, *got):
            self.seq = int(top)
            return
        self._reset()
        # the vector index's metadata columns read ~10x slower than the same fields from `memories`;
        # vectors are copied in chunks straight into the matrix (no second copy of every blob)
        meta = {int(r[0]): r[1:] for r in conn.memory_queries.embedded_fields()}
        self._grow(len(meta))
        for batch in self.vectors.scan(conn, 4096):
            rows = [r for r in batch if int(r[0]) in meta]
            if not rows:
                continue
            n, j = len(rows), self.n
            self._grow(j + n)
            self.mat[j : j + n] = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
                n, self.dim
            )
            self.ids[j : j + n] = [int(r[0]) for r in rows]
            self.alive[j : j + n] = True
            for k, f in enumerate(FIELDS):
                self.codes[f][j : j + n] = [self._code(f, meta[int(r[0])][k]) for r in rows]
            self.bits[:, j : j + n] = pack(self.mat[j : j + n])
            for i, r in enumerate(rows):
                self.row[int(r[0])] = j + i
            self.n = j + n
        self.seq = int(top)

    def _load_bulk(self, conn: Connection, ids: np.ndarray, mat: np.ndarray) -> bool:
        """Adopt `mat` (row i is the vector of ids[i]) as the matrix, keeping the rows whose memory
        is marked embedded. The five filter fields come joined in one string per row (a few
        hundred distinct ones), so the per-row Python work is one lookup, not five; sign bits
        are packed in blocks. False: a field holds the separator (the caller scans instead)."""
        meta = conn.memory_queries.embedded_fields_joined(SEP)
        if not meta:
            return True
        mids = np.fromiter((r[0] for r in meta), dtype=np.int64, count=len(meta))
        combos = [r[1] for r in meta]
        distinct = {c: i for i, c in enumerate(dict.fromkeys(combos))}
        parts = [c.split(SEP) for c in distinct]
        if any(len(p) != len(FIELDS) for p in parts):
            return False
        combo = np.fromiter(map(distinct.__getitem__, combos), dtype=np.int32, count=len(combos))
        pos = np.minimum(np.searchsorted(mids, ids), len(mids) - 1)
        ok = mids[pos] == ids
        if not ok.all():  # a vector without its memory marked embedded: not searchable
            ids, mat, pos = ids[ok], mat[ok], pos[ok]
        n = len(ids)
        self.mat = (
            mat
            if mat.flags.c_contiguous and mat.dtype == np.float32
            else np.ascontiguousarray(mat, np.float32)
        )
        self.ids = np.ascontiguousarray(ids, dtype=np.int64)
        self.alive = np.ones(n, dtype=bool)
        row_combo = combo[pos]
        for k, f in enumerate(FIELDS):
            of_combo = np.array([self._code(f, p[k]) for p in parts], dtype=np.int32)
            self.codes[f] = of_combo[row_combo]
        self.bits = packed(self.mat[:n])
        self.row = dict(zip(self.ids.tolist(), range(n), strict=True))
        self.n = n
        return True

    def _apply(self, conn: Connection, ids: list[int], ahead: dict[int, tuple] | None = None) -> None:
        """Put the changed memories' vectors (`ahead`: read with the feed's head, else read
        here); a memory without one any more leaves the matrix."""
        found: set[int] = set()
        for part in chunked(ids):  # a chunk's blobs at a time, not every changed vector at once
            if ahead is not None:
                rows = [ahead[m] for m in part if m in ahead]
            else:
                rows = self.vectors.entries(conn, part)
            self._grow(self.n + len(rows))
            for r in rows:
                self._put(r)
                found.add(int(r[0]))
        for mid in ids:
            if mid not in found and mid in self.row:
                j = self.row.pop(mid)
                self.alive[j] = False
                self.mat[j] = 0.0  # a deleted (forgotten) memory's vector leaves this process now,
                self.bits[:, j] = 0  # not at the next compaction
                self.dead += 1

    def _grow(self, need: int) -> None:
        if need <= len(self.ids):
            return
        cap = max(need, int(len(self.ids) * 1.5) + 1024)
        mat = np.zeros((cap, self.dim), dtype=np.float32)
        mat[: self.n] = self.mat[: self.n]
        self.mat = mat
        self.ids = np.resize(self.ids, cap)
        self.alive = np.concatenate([self.alive[: self.n], np.zeros(cap - self.n, dtype=bool)])
        for f in FIELDS:
            self.codes[f] = np.resize(self.codes[f], cap)
        bits = np.zeros((self.dim // 64, cap), dtype=np.uint64)
        bits[:, : self.n] = self.bits[:, : self.n]
        self.bits = bits

    def _code(self, field: str, value) -> int:
        voc = self.vocab[field]
        v = value or ""
        if v not in voc:
            voc[v] = len(voc)
        return voc[v]

    def _put(self, r) -> None:
        mid = int(r[0])
        j = self.row.get(mid)
        if j is None:
            j = self.n
            self.n += 1
            self.row[mid] = j
            self.ids[j] = mid
        self.mat[j] = np.frombuffer(r[1], dtype=np.float32)
        self.bits[:, j] = pack(self.mat[j : j + 1])[:, 0]
        self.alive[j] = True
        for k, f in enumerate(FIELDS):
            self.codes[f][j] = self._code(f, r[2 + k])

    def _compact(self) -> None:
        keep = np.flatnonzero(self.alive[: self.n])
        self.mat = np.ascontiguousarray(self.mat[keep])
        self.ids = self.ids[keep]
        self.alive = np.ones(len(keep), dtype=bool)
        for f in FIELDS:
            self.codes[f] = self.codes[f][keep]
        self.bits = np.ascontiguousarray(self.bits[:, keep])
        self._masks = {}
        self.n = len(keep)
        self.row = {int(m): j for j, m in enumerate(self.ids)}
        self.dead = 0

    # -- reads -----------------------------------------------------------------------------------
    def mask(self, filters: Filters) -> np.ndarray | None:
        """Rows passing `filters` (None: no row can pass); the last few are kept until a change."""
        got = self._masks.get(filters, False)
        if got is not False:
            return got
        if len(self._masks) > 32:
            self._masks = {}
        m = self._masks[filters] = self._mask(filters)
        return m

    def _mask(self, filters: Filters) -> np.ndarray | None:
        n = self.n
        m = self.alive[:n].copy()
        tiers = [self.vocab["tier"][t] for t in filters.tiers if t in self.vocab["tier"]]
        if not tiers:
            return None
        m &= np.isin(self.codes["tier"][:n], tiers)
        for f in ("kind", "category", "agent", "user"):
            want = getattr(filters, f)
            if want is not None:
                code = self.vocab[f].get(want)
                if code is None:
                    return None
                m &= self.codes[f][:n] == code
        return m

    def passing(self, ids: list[int], filters: Filters) -> tuple[set[int], list[int]]:
        """(those of `ids` whose row passes `filters`, those without a row here — the caller asks
        the table): the keyword matrix's filter check without a query per candidate."""
        with self.lock:
            m = self.mask(filters)
            # map/compress iterate in C (a generator here cost ~0.3 ms a recall, issue #24)
            rows = np.fromiter(map(self.row.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))
            here = rows >= 0
            unknown = list(compress(ids, (~here).tolist()))
            if m is None:
                return set(), unknown
            ok = np.zeros(len(ids), dtype=bool)
            ok[here] = m[rows[here]]
            return set(compress(ids, ok.tolist())), unknown

    def knn(
        self, q: np.ndarray, k: int, filters: Filters, bits_from: int = 0, rescore: int = 2000
    ) -> list[tuple[int, float]]:
        """Exact top-k by cosine. From `bits_from` rows on (0: never), candidates come from the
        Hamming distance of sign bits (48 bytes a row instead of 1,536) and max(rescore, 10k) of
        them are rescored exactly: recall@10 against exact search is measured in
        bench/search_latency.py."""
        with self.lock:
            m = self.mask(filters)
            if m is None or self.n == 0:
                return []
            q = np.asarray(q, dtype=np.float32)
            r = max(rescore, 10 * k)
            passing = int(m.sum())
            # Up to ~32k passing rows, gathering them and scoring exactly is cheapest; past that
            # the sign-bit scan over every row wins (measured at 1M: 0.6 s -> 30 ms for 200k).
            use_bits = bits_from and self.n >= bits_from and passing > max(r, 32_768)
            if passing * 4 < self.n and not use_bits:  # a narrow filter: score only its rows
                rows = np.flatnonzero(m)
                sims = np.einsum("ij,j->i", self.mat[rows], q)
                order = np.argsort(-sims, kind="stable")[:k]
                return ordered([(int(self.ids[rows[j]]), float(sims[j])) for j in order])
            if use_bits:
                # Filtered or not: gathering the rows a filter keeps copies them (200k rows at 1M:
                # 300 MB, 0.6 s a query); sign bits over every row cost a fraction of that.
                h = self._hamming(q)
                h[~m] = np.iinfo(np.uint16).max
                cand = np.argpartition(h, r)[:r]
                sims = np.einsum("ij,j->i", self.mat[cand], q)
                order = np.argsort(-sims, kind="stable")[:k]
                return ordered([(int(self.ids[cand[j]]), float(sims[j])) for j in order])
            return self._top(self._sims(q), m, k)

    def _hamming(self, q: np.ndarray) -> np.ndarray:
        return hamming(self.bits, self.n, q)

    def _sims(self, q: np.ndarray) -> np.ndarray:
        """Cosine to every row. einsum's single-threaded loop, not BLAS: a matrix-vector product is
        memory-bound, and BLAS threads fighting other processes for two cores ran it 1.3-4x slower."""
        return np.einsum("ij,j->i", self.mat[: self.n], np.asarray(q, dtype=np.float32))

    @staticmethod
    def _top_idx(sims: np.ndarray, m: np.ndarray, k: int) -> np.ndarray:
        sims = np.where(m, sims, -np.inf)
        avail = int(m.sum())
        k = min(k, avail)
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        part = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
        return part[np.argsort(-sims[part], kind="stable")][:k]

    def _top(self, sims, m, k) -> list[tuple[int, float]]:
        idx = self._top_idx(sims, m, k)
        return ordered([(int(self.ids[j]), float(sims[j])) for j in idx])

    def rank_of(self, q: np.ndarray, memory_id: int, filters: Filters) -> tuple[int | None, float | None]:
        with self.lock:
            j = self.row.get(int(memory_id))
            if j is None:
                return None, None
            sims = self._sims(q)
            sim = float(sims[j])
            m = self.mask(filters)
            if m is None:
                return None, sim
            return int(np.count_nonzero(sims[m] > sim)) + 1, sim

    def similarities(self, q: np.ndarray, ids: list[int]) -> dict[int, float]:
        with self.lock:
            rows = [(m, self.row[m]) for m in ids if m in self.row]
            if not rows:
                return {}
            sims = self.mat[[j for _, j in rows]] @ np.asarray(q, dtype=np.float32)
            return {m: float(s) for (m, _), s in zip(rows, sims, strict=True)}

    def best_matches(
        self, vecs: np.ndarray, agents: list[str], tiers: tuple[str, ...], skip: set[int]
    ) -> list[tuple[int | None, float]]:
        """For each vector, the most similar memory of the same agent in `tiers` (batched: one
        matrix product per agent), ignoring ids in `skip`."""
        out: list[tuple[int | None, float]] = [(None, -1.0)] * len(vecs)
        with self.lock:
            if self.n == 0:
                return out
            skip_rows = [self.row[m] for m in skip if m in self.row]
            vecs = np.asarray(vecs, dtype=np.float32)
            for agent in set(agents):
                sel = np.array([i for i, a in enumerate(agents) if a == agent])
                m = self.mask(Filters(tiers=tiers, agent=agent))
                if m is None:
                    continue
                m = m.copy()  # the cached mask is shared
                m[skip_rows] = False
                if not m.any():
                    continue
                if len(sel) == 1:  # an agent's remember: one vector against its own rows only
                    out[int(sel[0])] = self._best_one(vecs[sel[0]], m)
                    continue
                for c in range(0, len(sel), 64):  # bounded memory: 64 x n similarities at once
                    part = sel[c : c + 64]
                    sims = vecs[part] @ self.mat[: self.n].T
                    sims[:, ~m] = -np.inf
                    best = sims.argmax(axis=1)
                    top = sims[np.arange(len(part)), best]
                    for i, b, s in zip(part, best, top, strict=True):
                        out[int(i)] = (int(self.ids[b]), float(s))
        return out

    def _best_one(self, vec: np.ndarray, m: np.ndarray) -> tuple[int | None, float]:
        """The row passing `m` most similar to `vec` (the first in row order on a tie), as the
        batched product finds it. Issue #24: single-threaded einsum over the mask's rows only —
        a BLAS product over every row cost ~5 ms of CPU a remember (its threads spin on 2
        loaded cores) though an agent's rows are a fraction of the fleet's."""
        rows = np.flatnonzero(m)
        if len(rows) * 4 < self.n:
            sims = np.einsum("ij,j->i", self.mat[rows], vec)
        else:
            sims = np.einsum("ij,j->i", self.mat[: self.n], vec)[rows]
        b = int(sims.argmax())
        return int(self.ids[rows[b]]), float(sims[b])
