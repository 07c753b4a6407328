"""FTS5 behind the keyword index (engine/storage/indexes.py): memories_fts (porter words) and
memories_tri (trigrams, for CJK), the same pair for messages, and rules_fts / flows_fts.

Table names come from the fixed maps below, never from input; MATCH expressions arrive already
quoted (engine/query.py) and bound as parameters."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.storage.indexes import FtsIndex, FtsTable, MemoryFilter, MessageScope, Postings, run_lengths
from engine.storage.sqlite.filters import where as render

if TYPE_CHECKING:
    from engine.storage.port import Connection

MEMORIES: dict[str, str] = {"words": "memories_fts", "trigram": "memories_tri"}
MESSAGES: dict[str, str] = {"words": "messages_fts", "trigram": "messages_tri"}
LIFECYCLE: dict[str, str] = {"rules": "rules_fts", "flows": "flows_fts"}


# Equal BM25 at the LIMIT goes to the newer memory, as the retriever, the in-memory keyword matrix
# and the PostgreSQL adapter order ties (FTS5's own order is its scan's, oldest first).


class SqliteKeywordIndex:
    # -- memories --------------------------------------------------------------------------------
    def doc_freq(self, conn: Connection, match: str) -> int:
        return int(
            conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (match,)).fetchone()[
                0
            ]
        )

    def top(
        self, conn: Connection, index: FtsIndex, match: str, limit: int, above: int | None = None
    ) -> list[tuple[int, float]]:
        fts = MEMORIES[index]
        # On the FTS rowid, so FTS5 seeks past older entries instead of scoring and dropping them.
        window, wparams = ("", []) if above is None else (f" AND {fts}.rowid > ?", [above])
        rows = conn.execute(
            f"SELECT rowid, bm25({fts}) AS b FROM {fts} WHERE {fts} MATCH ?{window}"
            f" ORDER BY b, {fts}.rowid DESC LIMIT ?",
            [match, *wparams, limit],
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def top_where(
        self,
        conn: Connection,
        index: FtsIndex,
        match: str,
        filters: MemoryFilter,
        limit: int,
        above: int | None = None,
    ) -> list[tuple[int, float]]:
        fts = MEMORIES[index]
        where, params = render(filters, "m.")
        window, wparams = ("", []) if above is None else (f" AND {fts}.rowid > ?", [above])
        rows = conn.execute(
            f"SELECT m.id, bm25({fts}) AS b FROM {fts} JOIN memories m ON m.id = {fts}.rowid "
            f"WHERE {fts} MATCH ? AND {where}{window} ORDER BY b, {fts}.rowid DESC LIMIT ?",
            [match, *params, *wparams, limit],
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def passing(self, conn: Connection, ids: Sequence[int], filters: MemoryFilter) -> set[int]:
        if not ids:
            return set()
        where, params = render(filters, "m.")
        # Driven from the id list: with `id IN (...) AND tier IN (...)` and no statistics,
        # SQLite picks the tier index and walks 800k rows at 1M (220 ms instead of 0.5 ms).
        rows = conn.execute(
            f"SELECT m.id FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value WHERE {where}",
            [json.dumps(list(ids)), *params],
        ).fetchall()
        return {int(r[0]) for r in rows}

    def postings(self, conn: Connection) -> Postings:
        # FTS5's own view of its index, one row per token occurrence in (term, doc) order; a temp
        # table of this connection (nothing written to the file). Each term's documents come as
        # one text list, parsed in one go: ~0.5 s at 100k memories instead of 2 s row by row.
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_instances"
            " USING fts5vocab(main, memories_fts, instance)"
        )
        cur = conn.execute(
            "SELECT term, count(*), group_concat(doc) FROM temp.memories_fts_instances GROUP BY term"
        )
        lexemes: list[str] = []
        counts: list[np.ndarray] = []
        parts: list[np.ndarray] = []
        while rows := cur.fetchmany(4096):  # a batch of text lists at a time: a small peak
            lexemes += [r[0] for r in rows]
            counts.append(np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows)))
            parts.append(np.fromstring(",".join(r[2] for r in rows), dtype=np.int64, sep=","))
        if not lexemes:
            return Postings([], np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32))
        return run_lengths(lexemes, np.concatenate(counts), np.concatenate(parts))

    def rank_of(
        self, conn: Connection, index: FtsIndex, match: str, filters: MemoryFilter, memory_id: int
    ) -> tuple[int | None, int]:
        where, params = render(filters, "m.")
        fts = MEMORIES[index]
        base = f"FROM {fts} JOIN memories m ON m.id = {fts}.rowid WHERE {fts} MATCH ? AND {where}"
        total = conn.execute(f"SELECT count(*) {base}", [match, *params]).fetchone()[0]
        mine = conn.execute(f"SELECT bm25({fts}) {base} AND m.id = ?", [match, *params, memory_id]).fetchone()
        if mine is None:
            return None, int(total)
        better = conn.execute(
            f"SELECT count(*) {base} AND bm25({fts}) < ?", [match, *params, mine[0]]
        ).fetchone()[0]
        return int(better) + 1, int(total)

    def score_of(self, conn: Connection, index: FtsIndex, match: str, memory_id: int) -> float | None:
        fts = MEMORIES[index]
        row = conn.execute(
            f"SELECT bm25({fts}) FROM {fts} WHERE {fts} MATCH ? AND rowid = ?", (match, memory_id)
        ).fetchone()
        return float(row[0]) if row else None

    def has(self, conn: Connection, index: FtsIndex, match: str, memory_id: int) -> bool:
        fts = MEMORIES[index]
        row = conn.execute(
            f"SELECT 1 FROM {fts} WHERE {fts} MATCH ? AND rowid = ?", (match, memory_id)
        ).fetchone()
        return row is not None

    def contains(self, conn: Connection, memory_id: int, text: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM memories WHERE id = ? AND instr(content, ?) > 0", (memory_id, text)
        ).fetchone()
        return row is not None

    # -- the episodic log ---------------------------------------------------------------------------
    def messages(
        self, conn: Connection, index: FtsIndex, match: str, scope: MessageScope, limit: int
    ) -> list[Any]:
        fts = MESSAGES[index]
        where, params = _scope(scope)
        return list(
            conn.execute(
                "SELECT m.*, s.title AS session_title FROM messages m JOIN sessions s ON s.id = m.session_id"
                f" JOIN {fts} f ON f.rowid = m.id WHERE {fts} MATCH ?{where}"
                f" ORDER BY bm25({fts}) LIMIT ?",
                [match, *params, limit],
            ).fetchall()
        )

    # -- rules and flows -------------------------------------------------------------------------------
    def match_ids(self, conn: Connection, table: FtsTable, match: str, limit: int) -> list[tuple[int, float]]:
        fts = LIFECYCLE[table]
        rows = conn.execute(
            f"SELECT rowid, bm25({fts}) FROM {fts} WHERE {fts} MATCH ? ORDER BY bm25({fts}) LIMIT ?",
            (match, int(limit)),
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]


def _scope(scope: MessageScope) -> tuple[str, list[Any]]:
    """` AND ...` conditions on messages `m` and sessions `s`, with their parameters."""
    where, params = "", []
    if scope.session_id:
        where += " AND m.session_id = ?"
        params.append(scope.session_id)
    if scope.agent:
        where += " AND s.agent = ?"
        params.append(scope.agent)
    return where, params
