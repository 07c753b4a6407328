"""The keyword index on PostgreSQL: FTS5's BM25, computed in SQL over the engine's own lexemes.

`fts_terms` holds (source, document, lexeme, count) and `fts_docs` each document's length in
tokens, both filled by the store from `fts_pending` before a write commits (lexemes.py makes the
tokens FTS5's `porter unicode61 remove_diacritics 2` makes). The score is FTS5's bm25() to the bit:
k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6, idf * (tf-part), summed
in query order with FTS5's order of operations, negated (lower is better); ties go to the newer
row, as the SQLite adapter orders them. `ts_rank` is not used. Each query term is its own MATERIALIZED
CTE (one index range each); N and the total length come from keyword_stats.py's cache.

Match expressions arrive quoted by the engine (`"a" OR "b"`). A quoted term that tokenizes to
several lexemes is a phrase, as in FTS5: the documents holding all its lexemes are read and
counted for the lexemes in a row, column by column (phrases.py). The trigram index (CJK and
substring search) is keyword_trigram.py. Any other operator says it is not supported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from engine.storage.indexes import FtsIndex, FtsTable, MemoryFilter, MessageScope, Postings
from engine.storage.lexemes import lexemes
from engine.storage.port import Connection
from engine.storage.postgres.filters import where as render
from engine.storage.postgres.keyword_phrases import phrase_hits, quoted
from engine.storage.postgres.keyword_stats import Corpus, CorpusStats
from engine.storage.postgres.keyword_trigram import TrigramIndex

K1, B, IDF_FLOOR = 1.2, 0.75, 1e-6
Term = tuple[str, ...]  # one lexeme, or a phrase of several


def parse(match: str) -> list[Term]:
    """The lexemes of each quoted term of `match`, in query order (terms without any dropped)."""
    return [tuple(lx) for lx in (lexemes(t) for t in quoted(match)) if lx]


def scored_sql(
    src: str,
    terms: Sequence[Term],
    corpus: Corpus,
    given: dict[int, dict[int, int]],
    join: str = "",
    where: str = "",
    above: int | None = None,
    dfs: dict[int, int] | None = None,
) -> tuple[str, list[Any]]:
    """SQL yielding (doc_id, score) for every document matching any of `terms`, with its `%s`
    parameters; `join`/`where` restrict the documents (their `%s` parameters follow). `given`:
    {term index: {doc: tf}} for phrases, counted by the engine. `above`: documents above that id
    only, read as such from the index, with `dfs` the whole index's frequencies (IDF stays FTS5's)."""
    ctes: list[str] = []
    params: list[Any] = []
    win = "" if above is None else " AND doc_id > %s"
    for i, t in enumerate(terms):
        if i in given:
            ids = [d for d in given[i] if above is None or d > above]
            ctes.append(
                f"t{i} AS MATERIALIZED (SELECT * FROM unnest(CAST(%s AS bigint[]), CAST(%s AS integer[]))"
                " AS u(doc_id, tf))"
            )
            params += [ids, [given[i][d] for d in ids]]
        else:
            ctes.append(
                f"t{i} AS MATERIALIZED (SELECT doc_id, tf FROM fts_terms WHERE src = %s AND term = %s{win})"
            )
            params += [src, t[0], *([] if above is None else [above])]
    hits = " UNION ALL ".join(f"SELECT {i} AS q, doc_id, tf FROM t{i}" for i in range(len(terms)))
    idf = " UNION ALL ".join(
        f"SELECT {i} AS q, %s::float8 AS df"
        if dfs is not None
        else f"SELECT {i} AS q, (SELECT count(*) FROM t{i})::float8 AS df"
        for i in range(len(terms))
    )
    ctes.append(f"hits AS ({hits})")
    ctes.append(
        "idf AS (SELECT q, CASE WHEN v <= 0 THEN 1e-6::float8 ELSE v END AS v FROM (SELECT q,"
        " ln((%s::float8 - d.df + 0.5::float8) / (d.df + 0.5::float8)) AS v FROM (" + idf + ") d) x)"
    )
    params.append(float(corpus.n))  # N's `%s` comes before the frequencies' in the text
    if dfs is not None:
        params += [float(dfs[i]) for i in range(len(terms))]
    sql = (
        "WITH " + ", ".join(ctes) + " SELECT h.doc_id, -1.0::float8 * sum("
        "i.v * ((h.tf::float8 * (1.2::float8 + 1.0::float8)) / (h.tf::float8 + 1.2::float8 *"
        " (1::float8 - 0.75::float8 + 0.75::float8 * fd.len::float8 / %s::float8)))"
        " ORDER BY h.q) AS score"
        " FROM hits h JOIN idf i ON i.q = h.q JOIN fts_docs fd ON fd.src = %s AND fd.doc_id = h.doc_id"
        f" {join} {('WHERE ' + where) if where else ''} GROUP BY h.doc_id"
    )
    return sql, [*params, corpus.avgdl, src]


class PgKeywordIndex:
    def __init__(self, sync: Callable[[Connection], None]) -> None:
        self._sync = sync  # tokenizes the open write's pending rows before any keyword read
        self.stats = CorpusStats()
        self.trigram = TrigramIndex(self.stats)

    def _scores(
        self,
        conn: Connection,
        src: str,
        match: str,
        *,
        join: str = "",
        where: str = "",
        params: Sequence[Any] = (),
        limit: int | None = None,
        above: int | None = None,
    ) -> list[tuple[int, float]]:
        sql, p = self._scored(conn, src, match, join=join, where=where, above=above)
        if not sql:
            return []
        sql = f"SELECT doc_id, score FROM ({sql}) r ORDER BY score, doc_id DESC"  # ties: the newer
        if limit is not None:
            sql += " LIMIT %s"
        rows = conn.execute(sql, [*p, *params, *([int(limit)] if limit is not None else [])]).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def _scored(
        self,
        conn: Connection,
        src: str,
        match: str,
        *,
        join: str = "",
        where: str = "",
        above: int | None = None,
    ) -> tuple[str, list[Any]]:
        """The scoring SQL for `match` over `src` ('' when nothing can match) and its parameters
        (the `join`/`where` parameters follow them)."""
        self._sync(conn)
        terms = parse(match)
        if not terms:
            return "", []
        corpus = self.stats.get(conn, src)
        given = {i: phrase_hits(conn, src, t) for i, t in enumerate(terms) if len(t) > 1}
        dfs = None
        if above is not None:  # the window reads fewer postings; IDF still counts the whole index
            dfs = {
                i: len(given[i])
                if i in given
                else self.stats.df(corpus, t[0], partial(self._df, conn, src, t[0]))
                for i, t in enumerate(terms)
            }
        return scored_sql(src, terms, corpus, given, join, where, above, dfs)

    @staticmethod
    def _df(conn: Connection, src: str, lexeme: str) -> int:
        return int(
            conn.execute(
                "SELECT count(*) FROM fts_terms WHERE src = %s AND term = %s", [src, lexeme]
            ).fetchone()[0]
        )

    def _docs_matching(self, conn: Connection, src: str, match: str, doc_id: int | None = None) -> set[int]:
        self._sync(conn)
        out: set[int] = set()
        for t in parse(match):
            if len(t) > 1:
                out |= set(phrase_hits(conn, src, t, doc_id))
                continue
            sql = "SELECT doc_id FROM fts_terms WHERE src = %s AND term = %s"
            rows = conn.execute(
                sql + ("" if doc_id is None else " AND doc_id = %s"),
                [src, t[0], *([] if doc_id is None else [doc_id])],
            ).fetchall()
            out |= {int(r[0]) for r in rows}
        return out

    # -- memories --------------------------------------------------------------------------------
    def doc_freq(self, conn: Connection, match: str) -> int:
        return len(self._docs_matching(conn, "memories", match))

    def top(
        self, conn: Connection, index: FtsIndex, match: str, limit: int, above: int | None = None
    ) -> list[tuple[int, float]]:
        if index == "trigram":
            return self.trigram.top(conn, "memories", match, limit=limit, above=above)
        return self._scores(conn, "memories", match, limit=limit, above=above)

    def top_where(
        self,
        conn: Connection,
        index: FtsIndex,
        match: str,
        filters: MemoryFilter,
        limit: int | None,
        above: int | None = None,
    ) -> list[tuple[int, float]]:
        where, params = render(filters, "m.")
        if index == "trigram":
            return self.trigram.top(
                conn, "memories", match, where=where, params=params, limit=limit, above=above
            )
        return self._scores(
            conn,
            "memories",
            match,
            join="JOIN memories m ON m.id = h.doc_id",
            where=f"({where})",
            params=params,
            limit=limit,
            above=above,
        )

    def postings(self, conn: Connection) -> Postings:
        self._sync(conn)
        # One row per lexeme, its documents and counts as text lists parsed in one go (psycopg
        # would build a Python int per element from arrays).
        rows = conn.execute(
            "SELECT term, count(*), string_agg(doc_id::text, ',' ORDER BY doc_id),"
            " string_agg(tf::text, ',' ORDER BY doc_id) FROM fts_terms WHERE src = 'memories' GROUP BY term"
        ).fetchall()
        counts = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        docs, tfs = (
            np.fromstring(",".join(r[k] for r in rows) or "", dtype=np.int64, sep=",") for k in (2, 3)
        )
        starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return Postings([r[0] for r in rows], starts, docs, tfs.astype(np.int32))

    def passing(self, conn: Connection, ids: Sequence[int], filters: MemoryFilter) -> set[int]:
        if not ids:
            return set()
        where, params = render(filters, "m.")
        rows = conn.execute(
            f"SELECT m.id FROM memories m WHERE m.id = ANY(%s) AND ({where})", [list(ids), *params]
        ).fetchall()
        return {int(r[0]) for r in rows}

    def rank_of(
        self, conn: Connection, index: FtsIndex, match: str, filters: MemoryFilter, memory_id: int
    ) -> tuple[int | None, int]:
        scored = self.top_where(conn, index, match, filters, limit=None)  # every match
        mine = next((s for i, s in scored if i == memory_id), None)
        if mine is None:
            return None, len(scored)
        return sum(1 for _, s in scored if s < mine) + 1, len(scored)

    def score_of(self, conn: Connection, index: FtsIndex, match: str, memory_id: int) -> float | None:
        if index == "trigram":
            got = self.trigram.top(conn, "memories", match, where="m.id = %s", params=[memory_id])
        else:
            got = self._scores(conn, "memories", match, where="h.doc_id = %s", params=[memory_id])
        return got[0][1] if got else None

    def has(self, conn: Connection, index: FtsIndex, match: str, memory_id: int) -> bool:
        if index == "trigram":
            return self.trigram.has(conn, "memories", match, memory_id)
        return bool(self._docs_matching(conn, "memories", match, memory_id))

    def contains(self, conn: Connection, memory_id: int, text: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM memories WHERE id = %s AND strpos(content, %s) > 0", (memory_id, text)
        ).fetchone()
        return row is not None

    # -- the episodic log ---------------------------------------------------------------------------
    def messages(
        self, conn: Connection, index: FtsIndex, match: str, scope: MessageScope, limit: int
    ) -> list[Any]:
        where, params = _scope(scope)
        if index == "trigram":
            scored = self.trigram.top(
                conn, "messages", match, where="TRUE" + where, params=params, limit=limit
            )
            if not scored:
                return []
            sql = (
                "SELECT m.*, s.title AS session_title FROM unnest(CAST(%s AS bigint[]), CAST(%s AS float8[]))"
                " AS r(doc_id, score) JOIN messages m ON m.id = r.doc_id"
                " JOIN sessions s ON s.id = m.session_id ORDER BY r.score, m.id"
            )
            return list(conn.execute(sql, [[i for i, _ in scored], [s for _, s in scored]]).fetchall())
        sql, p = self._scored(
            conn,
            "messages",
            match,
            join="JOIN messages m ON m.id = h.doc_id JOIN sessions s ON s.id = m.session_id",
            where="TRUE" + where,
        )
        if not sql:
            return []
        return list(
            conn.execute(
                f"SELECT m.*, s.title AS session_title FROM ({sql}) r JOIN messages m ON m.id = r.doc_id"
                " JOIN sessions s ON s.id = m.session_id ORDER BY r.score, m.id LIMIT %s",
                [*p, *params, int(limit)],
            ).fetchall()
        )

    # -- rules and flows -------------------------------------------------------------------------------
    def match_ids(self, conn: Connection, table: FtsTable, match: str, limit: int) -> list[tuple[int, float]]:
        return self._scores(conn, table, match, limit=limit)


def _scope(scope: MessageScope) -> tuple[str, list[Any]]:
    """` AND ...` conditions on messages `m` and sessions `s`, with their parameters."""
    where, params = "", []
    if scope.session_id:
        where += " AND m.session_id = %s"
        params.append(scope.session_id)
    if scope.agent:
        where += " AND s.agent = %s"
        params.append(scope.agent)
    return where, params
