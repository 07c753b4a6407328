"""The corpus figures BM25 needs (document count, total length), cached per keyword source.

FTS5 keeps these in a record it updates on every write; here they are a count and a sum over
`fts_docs` (or the source table, for the trigram index), which cost a scan at 100k documents. So
they are cached with the keyword retriever's rules (engine/retrieval/keyword.py): re-read when
the highest id has moved by a tenth of the count, or after STATS_TTL_S. Small corpora (below
EXACT_BELOW documents, where the scan is cheap) are read on every query, so their scores stay
FTS5's to the bit while they change; a stale figure on a big one shifts scores by less than the
10% it waited for. Document frequencies read for windowed queries are cached alongside.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.storage.port import Connection

STATS_TTL_S = 300.0
EXACT_BELOW = 10_000
DF_CACHE_MAX = 50_000

# (count and total length, highest id) for each source: the fts_docs rows, or (trigram) the text
# itself, whose FTS5 length is one token per position with three characters: length - 2.
_WORDS = (
    "SELECT count(*), coalesce(sum(len), 0), coalesce(max(doc_id), 0) FROM fts_docs WHERE src = %s",
    "SELECT coalesce(max(doc_id), 0) FROM fts_docs WHERE src = %s",
)
TRIGRAM_TABLES = {"memories_tri": "memories", "messages_tri": "messages"}


@dataclass
class Corpus:
    n: int
    total: int
    top: int  # the highest id when read
    at: float  # time.monotonic() of the read
    df: dict[str, int] = field(default_factory=dict)

    @property
    def avgdl(self) -> float:
        return float(self.total) / float(self.n) if self.n else 1.0


class CorpusStats:
    """One store's cache of `Corpus` per source ('memories', 'messages', 'rules', 'flows',
    'memories_tri', 'messages_tri')."""

    def __init__(self) -> None:
        self._by_src: dict[str, Corpus] = {}
        self._lock = threading.Lock()

    def _queries(self, src: str) -> tuple[str, str, list[Any]]:
        table = TRIGRAM_TABLES.get(src)
        if table is None:
            return _WORDS[0], _WORDS[1], [src]
        return (
            f"SELECT count(*), coalesce(sum(greatest(char_length(content) - 2, 0)), 0),"
            f" coalesce(max(id), 0) FROM {table}",
            f"SELECT coalesce(max(id), 0) FROM {table}",
            [],
        )

    def get(self, conn: Connection, src: str) -> Corpus:
        full, top_only, params = self._queries(src)
        cached = self._by_src.get(src)
        if cached is not None and cached.n >= EXACT_BELOW and time.monotonic() - cached.at <= STATS_TTL_S:
            top = int(conn.execute(top_only, params).fetchone()[0])
            if abs(top - cached.top) <= 0.1 * cached.n:
                return cached
        n, total, top = conn.execute(full, params).fetchone()
        fresh = Corpus(int(n), int(total), int(top), time.monotonic())
        with self._lock:
            old = self._by_src.get(src)
            if old is not None and (old.n, old.total, old.top) == (fresh.n, fresh.total, fresh.top):
                fresh.df = old.df  # nothing moved: the frequencies read so far still hold
            self._by_src[src] = fresh
        return fresh

    def df(self, corpus: Corpus, term: str, read: Callable[[], int]) -> int:
        """The cached document frequency of `term`, read with `read()` on a miss."""
        got = corpus.df.get(term)
        if got is None:
            got = int(read())
            if len(corpus.df) > DF_CACHE_MAX:
                corpus.df.clear()
            corpus.df[term] = got
        return got

    def clear(self) -> None:
        with self._lock:
            self._by_src.clear()
