"""The keyword index on PostgreSQL: FTS5's BM25, computed in SQL over the engine's own lexemes.

`fts_terms` holds (source, document, lexeme, count) and `fts_docs` each document's length in
tokens, both filled by the store from `fts_pending` before a write commits (lexemes.py makes the
tokens FTS5's `porter unicode61 remove_diacritics 2` makes). The score is FTS5's bm25() to the bit:
k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6, idf * (tf-part), summed
in query order with FTS5's order of operations, negated (lower is better); ties go to the older
row, as FTS5's scan order does.
`ts_rank` is not used. Each query term is its own MATERIALIZED CTE (one index range each).

Match expressions arrive quoted by the engine (`"a" OR "b"`); a term that tokenizes to several
lexemes (a phrase), any other operator, and the trigram index are not in this slice and say so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from engine.storage.indexes import FtsIndex, FtsTable
from engine.storage.postgres.connection import unsupported
from engine.storage.postgres.lexemes import lexemes

_QUOTED = re.compile(r'"((?:[^"]|"")*)"')
K1, B, IDF_FLOOR = 1.2, 0.75, 1e-6


def parse(match: str) -> list[str]:
    """The lexeme of each quoted term of `match` (an OR of quoted terms), in query order."""
    rest = _QUOTED.sub(" ", match)
    if rest.replace("OR", " ").strip():
        raise unsupported(f"this keyword query form ({match[:60]!r}): only OR-ed quoted terms")
    out: list[str] = []
    for m in _QUOTED.finditer(match):
        lx = lexemes(m.group(1).replace('""', '"'))
        if len(lx) > 1:
            raise unsupported(f"phrase search ({m.group(1)[:40]!r} is several tokens)")
        if lx:
            out.append(lx[0])
    return out


def _words(index: FtsIndex) -> None:
    if index != "words":
        raise unsupported("the trigram index (CJK and substring search)")


def scored_sql(src: str, terms: Sequence[str], join: str = "", where: str = "") -> tuple[str, list[Any]]:
    """SQL yielding (doc_id, score) for every document matching any of `terms`, with its `?`
    parameters; `join`/`where` restrict the documents (their `?` parameters follow)."""
    ctes = ["stats AS MATERIALIZED (SELECT count(*)::float8 AS n, coalesce(sum(len), 0)::float8 AS total"
            " FROM fts_docs WHERE src = ?)"]  # fmt: skip
    params: list[Any] = [src]
    for i, t in enumerate(terms):
        ctes.append(f"t{i} AS MATERIALIZED (SELECT doc_id, tf FROM fts_terms WHERE src = ? AND term = ?)")
        params += [src, t]
    hits = " UNION ALL ".join(f"SELECT {i} AS q, doc_id, tf FROM t{i}" for i in range(len(terms)))
    idf = " UNION ALL ".join(
        f"SELECT {i} AS q, (SELECT count(*) FROM t{i})::float8 AS df" for i in range(len(terms))
    )
    ctes.append(f"hits AS ({hits})")
    ctes.append(
        "idf AS (SELECT q, CASE WHEN v <= 0 THEN 1e-6::float8 ELSE v END AS v FROM (SELECT q,"
        " ln((st.n - d.df + 0.5::float8) / (d.df + 0.5::float8)) AS v FROM (" + idf + ") d, stats st) x)"
    )
    sql = (
        "WITH " + ", ".join(ctes) + " SELECT h.doc_id, -1.0::float8 * sum("
        "i.v * ((h.tf::float8 * (1.2::float8 + 1.0::float8)) / (h.tf::float8 + 1.2::float8 *"
        " (1::float8 - 0.75::float8 + 0.75::float8 * fd.len::float8 / (st.total / st.n))))"
        " ORDER BY h.q) AS score"
        " FROM hits h JOIN idf i ON i.q = h.q JOIN fts_docs fd ON fd.src = ? AND fd.doc_id = h.doc_id"
        f" CROSS JOIN stats st {join} {('WHERE ' + where) if where else ''} GROUP BY h.doc_id"
    )
    return sql, [*params, src]


class PgKeywordIndex:
    def __init__(self, sync: Any) -> None:
        self._sync = sync  # tokenizes the open write's pending rows before any keyword read

    def _scores(
        self,
        conn: Any,
        src: str,
        match: str,
        *,
        join: str = "",
        where: str = "",
        params: Sequence[Any] = (),
        limit: int | None = None,
    ) -> list[tuple[int, float]]:
        self._sync(conn)
        terms = parse(match)
        if not terms:
            return []
        sql, p = scored_sql(src, terms, join, where)
        sql = f"SELECT doc_id, score FROM ({sql}) r ORDER BY score, doc_id"
        if limit is not None:
            sql += " LIMIT ?"
        rows = conn.execute(sql, [*p, *params, *([int(limit)] if limit is not None else [])]).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    # -- memories --------------------------------------------------------------------------------
    def doc_freq(self, conn: Any, match: str) -> int:
        self._sync(conn)
        terms = parse(match)
        if not terms:
            return 0
        row = conn.execute(
            "SELECT count(DISTINCT doc_id) FROM fts_terms WHERE src = 'memories' AND term = ANY(?)", [terms]
        ).fetchone()
        return int(row[0])

    def top(
        self, conn: Any, index: FtsIndex, match: str, limit: int, above: int | None = None
    ) -> list[tuple[int, float]]:
        _words(index)
        where, params = ("", []) if above is None else ("h.doc_id > ?", [above])
        return self._scores(conn, "memories", match, where=where, params=params, limit=limit)

    def top_where(
        self,
        conn: Any,
        index: FtsIndex,
        match: str,
        where: str,
        params: Sequence[Any],
        limit: int,
        above: int | None = None,
    ) -> list[tuple[int, float]]:
        _words(index)
        w = f"({where})" + ("" if above is None else " AND h.doc_id > ?")
        p = [*params, *([] if above is None else [above])]
        return self._scores(
            conn, "memories", match, join="JOIN memories m ON m.id = h.doc_id", where=w, params=p, limit=limit
        )

    def passing(self, conn: Any, ids: Sequence[int], where: str, params: Sequence[Any]) -> set[int]:
        if not ids:
            return set()
        rows = conn.execute(
            f"SELECT m.id FROM memories m WHERE m.id = ANY(?) AND ({where})", [list(ids), *params]
        ).fetchall()
        return {int(r[0]) for r in rows}

    def rank_of(
        self, conn: Any, index: FtsIndex, match: str, where: str, params: Sequence[Any], memory_id: int
    ) -> tuple[int | None, int]:
        _words(index)
        scored = self._scores(
            conn,
            "memories",
            match,
            join="JOIN memories m ON m.id = h.doc_id",
            where=f"({where})",
            params=params,
        )
        mine = next((s for i, s in scored if i == memory_id), None)
        if mine is None:
            return None, len(scored)
        return sum(1 for _, s in scored if s < mine) + 1, len(scored)

    def score_of(self, conn: Any, index: FtsIndex, match: str, memory_id: int) -> float | None:
        _words(index)
        got = self._scores(conn, "memories", match, where="h.doc_id = ?", params=[memory_id])
        return got[0][1] if got else None

    def has(self, conn: Any, index: FtsIndex, match: str, memory_id: int) -> bool:
        _words(index)
        self._sync(conn)
        terms = parse(match)
        if not terms:
            return False
        row = conn.execute(
            "SELECT 1 FROM fts_terms WHERE src = 'memories' AND term = ANY(?) AND doc_id = ? LIMIT 1",
            [terms, memory_id],
        ).fetchone()
        return row is not None

    def contains(self, conn: Any, memory_id: int, text: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM memories WHERE id = ? AND strpos(content, ?) > 0", (memory_id, text)
        ).fetchone()
        return row is not None

    # -- the episodic log ---------------------------------------------------------------------------
    def messages(
        self, conn: Any, index: FtsIndex, match: str, where: str, params: Sequence[Any], limit: int
    ) -> list[Any]:
        _words(index)
        self._sync(conn)
        terms = parse(match)
        if not terms:
            return []
        sql, p = scored_sql(
            "messages",
            terms,
            "JOIN messages m ON m.id = h.doc_id JOIN sessions s ON s.id = m.session_id",
            "TRUE" + where,
        )
        return list(
            conn.execute(
                f"SELECT m.*, s.title AS session_title FROM ({sql}) r JOIN messages m ON m.id = r.doc_id"
                " JOIN sessions s ON s.id = m.session_id ORDER BY r.score, m.id LIMIT ?",
                [*p, *params, int(limit)],
            ).fetchall()
        )

    # -- rules and flows -------------------------------------------------------------------------------
    def match_ids(self, conn: Any, table: FtsTable, match: str, limit: int) -> list[tuple[int, float]]:
        return self._scores(conn, table, match, limit=limit)
