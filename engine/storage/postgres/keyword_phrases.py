"""Phrases in the keyword index: a quoted term that tokenizes to several lexemes ("o'clock",
"e-mail", "v1.2") matches as FTS5 matches a phrase — the lexemes in a row, inside one column.

`fts_terms` keeps counts, not positions, so the documents holding every lexeme of the phrase are
found there and their text is tokenized again here to count the phrase's occurrences (FTS5's tf for
a phrase); the document frequency is how many have at least one. Phrases are rare in queries (the
engine quotes single words), so reading those texts costs less than keeping positions for every
token of every document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from engine.storage.lexemes import lexemes
from engine.storage.port import Connection
from engine.storage.postgres.connection import unsupported
from engine.storage.postgres.schema import KEYWORD_SOURCES

BATCH = 2000
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


def quoted(match: str) -> list[str]:
    """The text of each quoted term of `match` (an OR of quoted terms), in query order."""
    rest = _QUOTED.sub(" ", match)
    if rest.replace("OR", " ").strip():
        raise unsupported(f"this keyword query form ({match[:60]!r}): only OR-ed quoted terms")
    return [m.group(1).replace('""', '"') for m in _QUOTED.finditer(match)]


def occurrences(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    """How many times `phrase` appears in `tokens` as consecutive tokens (overlaps count)."""
    k = len(phrase)
    first = phrase[0]
    return sum(
        1
        for i in range(len(tokens) - k + 1)
        if tokens[i] == first and list(tokens[i : i + k]) == list(phrase)
    )


def count_in(columns: Sequence[Any], phrase: Sequence[str]) -> int:
    """The phrase's occurrences summed over a document's columns (never across two)."""
    return sum(occurrences(lexemes(str(v)), phrase) for v in columns if v is not None)


def phrase_hits(
    conn: Connection, src: str, phrase: Sequence[str], doc_id: int | None = None
) -> dict[int, int]:
    """{document id: occurrences} of `phrase` in source `src` (only `doc_id`, when given)."""
    distinct = sorted(set(phrase))
    rows = conn.execute(
        "SELECT doc_id FROM fts_terms WHERE src = %s AND term = ANY(%s)"
        + ("" if doc_id is None else " AND doc_id = %s")
        + " GROUP BY doc_id HAVING count(*) = %s",
        [src, distinct, *([] if doc_id is None else [doc_id]), len(distinct)],
    ).fetchall()
    candidates = sorted(int(r[0]) for r in rows)
    table, cols = KEYWORD_SOURCES[src]
    # Names from the fixed map above, never from input.
    query = f"SELECT id, {', '.join(cols)} FROM {table} WHERE id = ANY(%s)"
    out: dict[int, int] = {}
    for at in range(0, len(candidates), BATCH):
        for r in conn.execute(query, [candidates[at : at + BATCH]]).fetchall():
            n = count_in(list(r)[1:], phrase)
            if n:
                out[int(r[0])] = n
    return out
