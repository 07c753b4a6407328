"""Every memory's words held in memory, for long-lived engines (the console, the MCP server, benches):
BM25 of a whole query as a few numpy passes over the postings of its words. The store's keyword
index scores every match one row at a time (~1.6 µs a match: 0.75 s at 1M memories for a query
whose words are in half of them), which is why one-shot engines bound its cost
(engine/retrieval/keyword.py); with the postings in memory a long-lived engine ranks every word over
every match — the unbounded answer — in a few milliseconds.

The score is the embedded index's BM25 to the bit: k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5))
floored at 1e-6, idf * tf(k1 + 1) / (tf + k1(1 - b + b·len/avglen)) summed in query order, in
float64 with FTS5's order of operations; N, n and the lengths are the index's own (a memory's length
is its number of tokens, the sum of its counts). Ties go to the newer memory, as the retriever
sorts them.

It stays equal to the database through the change log's `text_changed` entries (memories written,
edited or deleted, by this process or any other): those leave the arrays and are kept, tokenized
by the engine's FTS5-compatible tokenizer (engine/storage/lexemes.py), in a small overlay scored in
Python; past `RELOAD_FROM` of them (or a quarter of the memories) a sync reloads instead. The
overlay's cost is bounded by text as well (a burst of huge memories from another process): a sync
tokenizes at most `SYNC_MAX_CHARS` in the caller's thread and the overlay holds at most
`OVERLAY_MAX_CHARS`; past either, nothing is tokenized in the foreground — the store answers until a
background reload folds the burst into the arrays. Tier and
other filter changes are not its business: filters are checked against the table for the best
candidates only. A word that tokenizes to several lexemes is a phrase, which needs positions the
arrays do not keep: such queries stay with the store's index (`lexemes_of` says None).
"""

from __future__ import annotations

import ctypes
import math
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Literal

import numpy as np

from engine.batches import chunked
from engine.storage.feed import TEXTS
from engine.storage.lexemes import counted, lexemes

if TYPE_CHECKING:
    from engine.storage.indexes import KeywordIndex
    from engine.storage.port import ChangeFeed, Connection

K1, B, IDF_FLOOR = 1.2, 0.75, 1e-6
RELOAD_FROM = 5_000  # overlay memories past this (and past a quarter of all): reload, not overlay
# Tokenizing runs at ~0.3-1 MB/s in Python: these keep one sync under ~0.5 s and the overlay's
# counts under ~40 MB (bench/keyword_overlay_burst.py has the figures).
SYNC_MAX_CHARS = 200_000  # text one sync may tokenize in the caller's thread
OVERLAY_MAX_CHARS = 2_000_000  # text the overlay may hold


def lexemes_of(terms: Sequence[str]) -> list[str] | None:
    """The one lexeme of each query word, in order (words without any dropped, as FTS5 ignores
    them); None when a word is a phrase of several."""
    out = []
    for t in terms:
        lx = lexemes(t)
        if len(lx) > 1:
            return None
        out += lx
    return out


class KeywordMatrix:
    def __init__(self, index: KeywordIndex, feed: ChangeFeed) -> None:
        self.index = index  # the store's keyword index (its bulk postings read)
        self.feed = feed  # the change log followed by sync()
        self.lock = threading.RLock()
        self._reset()
        feed.follow(self)  # the feed may read the changed contents with its head (one statement)

    reads: Literal["vectors", "texts"] = TEXTS  # what the feed reads ahead for it (storage/feed.py)

    def _reset(self) -> None:
        self.seq = -1  # last change-log entry applied (-1: never loaded)
        self.ids = np.zeros(0, dtype=np.int64)  # memories of the arrays, ascending: slot = position
        self.dl = np.zeros(0, dtype=np.float64)  # each slot's length in tokens
        self.alive = np.zeros(0, dtype=bool)  # False: changed or deleted since the load
        self.at: dict[str, int] = {}  # lexeme -> its postings: slots[starts[i]:starts[i + 1]]
        self.names: list[str] = []  # lexeme of each postings list
        self.starts = np.zeros(1, dtype=np.int64)
        self.slots = np.zeros(0, dtype=np.int32)
        self.tfs = np.zeros(0, dtype=np.int32)
        self.extra: dict[
            int, tuple[Counter[str], int, int]
        ] = {}  # overlay: memory -> (counts, length, chars)
        self.extra_chars = 0  # text held in the overlay
        self.extra_at: dict[str, dict[int, int]] = {}  # overlay by lexeme: memory -> count
        self.n_docs = 0
        self.total = 0.0  # tokens over all memories
        self._dead: np.ndarray | None = None  # sorted dead slots (None: recompute)
        self._norm: tuple[tuple[int, float], np.ndarray] | None = None

    # -- keeping up with the database -------------------------------------------------------------
    def sync(self, conn: Connection, may_reload: bool = True) -> bool:
        """Apply what changed since the last sync. False: it is too far behind for the overlay and
        `may_reload` is off (nothing changed; the caller reloads it elsewhere). Outside a write
        transaction only: a rolled-back write must never reach the matrix."""
        with self.lock:
            top, low = self.feed.head(conn)
            if self.seq == top:
                return True
            ids, ahead = None, None
            if self.seq >= 0 and not (low > self.seq + 1 and top > 0):
                got = self.feed.caught_up(conn, self.seq)
                if got is not None:  # read with the head: the contents too, unless past their bound
                    ids, ahead = got.changed(self.seq, text=True), got.texts
                else:
                    ids = self.feed.changed(conn, self.seq, top, text=True)
            if (
                ids is None
                or len(self.extra) + len(ids) > max(RELOAD_FROM, len(self.ids) // 4)
                or self._too_much_text(conn, ids, ahead)
            ):
                if not may_reload:
                    return False
                self.load(conn)
                return True
            self._apply(conn, ids, ahead)
            self.seq = int(top)
            return True

    def load(self, conn: Connection) -> None:
        """Read every memory's postings in bulk (in the caller's read snapshot)."""
        with self.lock:
            self._reset()
            top = self.feed.newest(conn)  # first: anything newer is re-applied, never missed
            p = self.index.postings(conn)
            ids = np.fromiter(conn.memory_queries.all_ids(), np.int64)
            slots = np.minimum(np.searchsorted(ids, p.docs), max(len(ids) - 1, 0))
            keep = ids[slots] == p.docs if len(ids) else np.zeros(len(p.docs), dtype=bool)
            if not keep.all():  # postings of a memory gone meanwhile: drop them
                starts = np.concatenate([[0], np.cumsum(keep)])[p.starts]
                slots, tfs = slots[keep], p.tfs[keep]
            else:
                starts, tfs = p.starts, p.tfs
            self.ids = ids
            self.slots = slots.astype(np.int32)
            self.tfs = tfs.astype(np.int32)
            self.starts = starts.astype(np.int64)
            self.at = {lx: i for i, lx in enumerate(p.lexemes)}
            self.names = list(p.lexemes)
            self.dl = np.bincount(self.slots, weights=self.tfs, minlength=len(ids)).astype(np.float64)
            self.alive = np.ones(len(ids), dtype=bool)
            self.n_docs = len(ids)
            self.total = float(self.dl.sum())
            self.seq = int(top)

    def _too_much_text(self, conn: Connection, ids: list[int], ahead: dict[int, str] | None = None) -> bool:
        """The changed memories' text is past what one sync may tokenize here, or would take the
        overlay past its bound (their length is read, not their text, unless `ahead` has it:
        the contents the feed read with its head)."""
        room = min(SYNC_MAX_CHARS, OVERLAY_MAX_CHARS - self.extra_chars)
        if ahead is not None:
            return sum(len(ahead[m]) for m in ids if m in ahead) > room
        chars = 0
        for part in chunked(ids):
            chars += conn.memory_queries.text_length(part)
            if chars > room:
                return True
        return False

    def _apply(self, conn: Connection, ids: list[int], ahead: dict[int, str] | None = None) -> None:
        held = [mid for mid in ids if self._slot(mid) is not None]  # in the arrays until now
        for mid in ids:  # out of the arrays and the overlay; back below if it still exists
            self._drop(mid)
        texts = (
            conn.memory_queries.texts(ids) if ahead is None else ((m, ahead[m]) for m in ids if m in ahead)
        )
        for mid, content in texts:
            tf, n = counted(content or "")
            self.extra[int(mid)] = (tf, n, len(content or ""))
            self.extra_chars += len(content or "")
            for lx, c in tf.items():
                self.extra_at.setdefault(lx, {})[int(mid)] = c
            self.n_docs += 1
            self.total += n
        if held:
            self._purge(held)
        self._norm = None

    def _slot(self, mid: int) -> int | None:
        """The live array slot of memory `mid` (None: not in the arrays, or changed since)."""
        j = int(np.searchsorted(self.ids, mid))
        return j if j < len(self.ids) and self.ids[j] == mid and self.alive[j] else None

    def _purge(self, gone: list[int]) -> None:
        """Memories edited or deleted (a forget) since the load: their counts zeroed in the arrays
        and a lexeme no live memory holds dropped, so no trace of their old words stays in this
        process until a reload. One pass over the postings (~10 ms at 1M memories)."""
        j = np.searchsorted(self.ids, gone)
        j = j[(j < len(self.ids))]
        j = j[np.isin(self.ids[j], gone)]
        if not len(j):
            return
        at = np.flatnonzero(np.isin(self.slots, j))
        self.tfs[at] = 0
        terms = np.unique(np.searchsorted(self.starts, at, side="right") - 1)
        dead = self._dead_slots()
        for i in terms.tolist():
            sl = self.slots[self.starts[i] : self.starts[i + 1]]
            if _count_in(dead, sl) == len(sl):
                self.at.pop(self.names[i], None)
                self.names[i] = ""

    def _drop(self, mid: int) -> None:
        j = int(np.searchsorted(self.ids, mid))
        if j < len(self.ids) and self.ids[j] == mid and self.alive[j]:
            self.alive[j] = False
            self._dead = None
            self.n_docs -= 1
            self.total -= float(self.dl[j])
        old = self.extra.pop(mid, None)
        if old is not None:
            for lx in old[0]:
                holders = self.extra_at[lx]
                holders.pop(mid, None)
                if not holders:  # the word leaves the dictionary with its last memory
                    del self.extra_at[lx]
            self.n_docs -= 1
            self.total -= old[1]
            self.extra_chars -= old[2]

    # -- reads ---------------------------------------------------------------------------------------
    def scores(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(memory ids, BM25 as a positive score) of every memory holding any of `terms` (lexemes,
        in query order), unordered."""
        with self.lock:
            n_docs = self.n_docs
            if n_docs <= 0 or not terms:
                return np.zeros(0, dtype=np.int64), np.zeros(0)
            avgdl = self.total / n_docs
            norm = self._norms(n_docs, avgdl)
            dead = self._dead_slots()
            score = np.zeros(len(self.ids))
            extra: dict[int, float] = {}
            for lx in terms:
                i = self.at.get(lx)
                s, e = (int(self.starts[i]), int(self.starts[i + 1])) if i is not None else (0, 0)
                sl = self.slots[s:e]
                in_extra = self.extra_at.get(lx, {})
                df = (e - s) - _count_in(dead, sl) + len(in_extra)
                idf = math.log((n_docs - df + 0.5) / (df + 0.5))
                if idf <= 0.0:
                    idf = IDF_FLOOR
                if e > s:
                    tf = self.tfs[s:e].astype(np.float64)
                    score[sl] += idf * ((tf * (K1 + 1.0)) / (tf + norm[sl]))
                for mid, c in in_extra.items():
                    dl = self.extra[mid][1]
                    f = float(c)
                    extra[mid] = extra.get(mid, 0.0) + idf * (
                        (f * (K1 + 1.0)) / (f + K1 * (1 - B + B * dl / avgdl))
                    )
            if len(dead):
                score[dead] = 0.0
            hit = np.flatnonzero(score > 0.0)
            ids, sc = self.ids[hit], score[hit]
            if extra:
                ids = np.concatenate([ids, np.fromiter(extra.keys(), np.int64, len(extra))])
                sc = np.concatenate([sc, np.fromiter(extra.values(), np.float64, len(extra))])
            return ids, sc

    def top(self, terms: Sequence[str], n: int, passing: Callable[[list[int]], set[int]]) -> dict[int, float]:
        """The n best memories for `terms` that `passing` keeps: {memory id: score}. `passing` is
        asked about the best candidates only, in growing rounds until n pass."""
        ids, sc = self.scores(terms)
        asked: set[int] = set()
        passed: set[int] = set()
        take = max(4 * n, 64)
        while n > 0 and len(sc):
            sel = best(ids, sc, take)
            new = [m for m in ids[sel].tolist() if m not in asked]
            if new:
                passed |= passing(new)
                asked.update(new)
            out: dict[int, float] = {}
            for m, v in zip(ids[sel].tolist(), sc[sel].tolist(), strict=True):
                if m in passed:
                    out[m] = v
                    if len(out) >= n:
                        return out
            if len(sel) >= len(sc):
                return out
            # next round: enough for n at the share that passed so far (a narrow filter's share is
            # known after one round), at least twice as many
            rate = max(len(passed) / len(asked), 1e-3)
            take = max(2 * take, int(1.25 * n / rate) + 64)
        return {}

    # -- internals -------------------------------------------------------------------------------------
    def _norms(self, n_docs: int, avgdl: float) -> np.ndarray:
        key = (n_docs, avgdl)
        if self._norm is None or self._norm[0] != key:
            self._norm = (key, K1 * (1 - B + B * self.dl / avgdl))
        return self._norm[1]

    def _dead_slots(self) -> np.ndarray:
        if self._dead is None:
            self._dead = np.flatnonzero(~self.alive).astype(np.int32)
        return self._dead

    def memory_bytes(self) -> int:
        return sum(a.nbytes for a in (self.ids, self.dl, self.alive, self.starts, self.slots, self.tfs))


def _count_in(dead: np.ndarray, sl: np.ndarray) -> int:
    """How many of the sorted `dead` slots are in the sorted postings `sl`."""
    if not len(dead) or not len(sl):
        return 0
    j = np.minimum(np.searchsorted(sl, dead), len(sl) - 1)
    return int(np.count_nonzero(sl[j] == dead))


def best(ids: np.ndarray, sc: np.ndarray, take: int) -> np.ndarray:
    """Positions of the `take` best by (score desc, id desc), in that order: ties at the cut go
    to the newer memories, and many equal scores never widen the cut."""
    if take >= len(sc):
        sel = np.arange(len(sc))
    else:
        cut = sc[np.argpartition(-sc, take - 1)[take - 1]]
        above = np.flatnonzero(sc > cut)
        ties = np.flatnonzero(sc == cut)
        need = take - len(above)
        if need < len(ties):
            ties = ties[np.argpartition(-ids[ties], need - 1)[:need]]
        sel = np.concatenate([above, ties])
    return sel[np.lexsort((-ids[sel], -sc[sel]))]


def give_back_memory() -> None:
    """Return the heap a bulk load freed (its row batches and text lists) to the system: glibc
    keeps it otherwise, and a long-lived process's RSS stays ~3x the arrays (100k: +93 MB -> +28
    MB). Elsewhere than glibc, nothing to do."""
    with suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
