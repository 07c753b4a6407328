"""The keyword index's upkeep on PostgreSQL: rows whose text changed in the open write were queued
in `fts_pending` by triggers (schema.py); before the write commits (and before any keyword read
inside it) their lexemes replace their old ones in `fts_terms`, their lengths in `fts_docs`, COPYed
in one stream each. The tokenizer is the engine's FTS5-compatible one (engine/storage/lexemes.py)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import psycopg
from psycopg import sql as pgsql

from engine.storage.lexemes import counted
from engine.storage.postgres import schema


def tokenize_pending(raw: psycopg.Connection[Any]) -> None:
    """Empty `fts_pending` into fts_terms / fts_docs on the write's own connection `raw`."""
    pending: dict[str, set[int]] = defaultdict(set)
    for src, doc_id in raw.execute("DELETE FROM fts_pending RETURNING src, doc_id").fetchall():
        pending[src].add(int(doc_id))
    for src, id_set in pending.items():
        table, cols = schema.KEYWORD_SOURCES[src]
        ids = sorted(id_set)
        raw.execute("DELETE FROM fts_terms WHERE src = %s AND doc_id = ANY(%s)", [src, ids])
        raw.execute("DELETE FROM fts_docs WHERE src = %s AND doc_id = ANY(%s)", [src, ids])
        query = pgsql.SQL("SELECT id, {} FROM {} WHERE id = ANY(%s)").format(
            pgsql.SQL(", ").join(pgsql.Identifier(c) for c in cols), pgsql.Identifier(table)
        )
        rows = raw.execute(query, [ids]).fetchall()
        with raw.cursor().copy("COPY fts_terms (src, doc_id, term, tf) FROM STDIN") as terms_copy:
            docs: list[tuple[str, int, int]] = []
            for r in rows:
                text = " ".join(str(v) for v in r[1:] if v is not None)
                tf, length = counted(text)
                docs.append((src, int(r[0]), length))
                for term, count in tf.items():
                    terms_copy.write_row((src, int(r[0]), term, count))
        with raw.cursor().copy("COPY fts_docs (src, doc_id, len) FROM STDIN") as docs_copy:
            for d in docs:
                docs_copy.write_row(d)
