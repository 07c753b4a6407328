"""The keyword index's upkeep on PostgreSQL: rows whose text changed in the open write were queued
in `fts_pending` by triggers (schema.py); before the write commits (and before any keyword read
inside it) their lexemes replace their old ones in `fts_terms`, their lengths in `fts_docs`. The
tokenizer is the engine's FTS5-compatible one (engine/storage/lexemes.py).

Round trips (issue #24): one statement empties the queue and drops the queued documents' old terms
and lengths; one reads their text (per source); the new terms and lengths go in one pipeline of
two array INSERTs, or COPYed when there are many (a bulk import)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import psycopg
from psycopg import sql as pgsql

from engine.storage.lexemes import counted
from engine.storage.postgres import schema

COPY_ABOVE = 5000  # terms: past this many, COPY streams them (fewer bytes, no parameter arrays)


def _drop(src: str) -> str:
    # per source, a constant `src` and an id array: the fts_terms_doc index answers, whatever the
    # planner guesses of the queue's size
    ids = f"ARRAY(SELECT doc_id FROM p WHERE src = '{src}')"
    return (
        f", t_{src} AS (DELETE FROM fts_terms WHERE src = '{src}' AND doc_id = ANY({ids}))"
        f", d_{src} AS (DELETE FROM fts_docs WHERE src = '{src}' AND doc_id = ANY({ids}))"
    )


# Every data-modifying part of a WITH runs to completion, read or not (names are schema.py's).
TAKE_PENDING = (
    "WITH p AS (DELETE FROM fts_pending RETURNING src, doc_id)"
    + "".join(_drop(src) for src in schema.KEYWORD_SOURCES)
    + " SELECT DISTINCT src, doc_id FROM p"
)
INSERT_TERMS = (
    "INSERT INTO fts_terms (src, doc_id, term, tf)"
    " SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::bigint[])"
)
INSERT_DOCS = (
    "INSERT INTO fts_docs (src, doc_id, len) SELECT * FROM unnest(%s::text[], %s::bigint[], %s::bigint[])"
)


def tokenize_pending(raw: psycopg.Connection[Any]) -> None:
    """Empty `fts_pending` into fts_terms / fts_docs on the write's own connection `raw`."""
    pending: dict[str, set[int]] = defaultdict(set)
    for src, doc_id in raw.execute(TAKE_PENDING).fetchall():
        pending[src].add(int(doc_id))
    terms: list[tuple[str, int, str, int]] = []
    docs: list[tuple[str, int, int]] = []
    for src, id_set in pending.items():
        table, cols = schema.KEYWORD_SOURCES[src]
        query = pgsql.SQL("SELECT id, {} FROM {} WHERE id = ANY(%s)").format(
            pgsql.SQL(", ").join(pgsql.Identifier(c) for c in cols), pgsql.Identifier(table)
        )
        for r in raw.execute(query, [sorted(id_set)]).fetchall():
            text = " ".join(str(v) for v in r[1:] if v is not None)
            tf, length = counted(text)
            docs.append((src, int(r[0]), length))
            terms += [(src, int(r[0]), term, count) for term, count in tf.items()]
    if not docs:
        return
    if len(terms) > COPY_ABOVE:
        with raw.cursor().copy("COPY fts_terms (src, doc_id, term, tf) FROM STDIN") as terms_copy:
            for row in terms:
                terms_copy.write_row(row)
        with raw.cursor().copy("COPY fts_docs (src, doc_id, len) FROM STDIN") as docs_copy:
            for d in docs:
                docs_copy.write_row(d)
        return
    with raw.pipeline():  # both in one round trip
        if terms:
            raw.execute(INSERT_TERMS, [list(c) for c in zip(*terms, strict=True)])
        raw.execute(INSERT_DOCS, [list(c) for c in zip(*docs, strict=True)])
