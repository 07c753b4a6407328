"""BM25 recomputed offline with any k1 / b, for bench/locomo_ideas.py: each turn's term counts as
FTS5 tokenizes them (the engine's tokenizer) and each question's terms as the keyword plan has them."""

from __future__ import annotations

import numpy as np
from locomo import turn_content, turns


def add_bm25(convs: list[dict], data: list[dict]) -> float:
    """Per conversation, each turn's term counts as FTS5 tokenizes them (the engine's tokenizer:
    porter over unicode61), and each question's terms as the engine's keyword plan has them, so
    BM25 can be recomputed with any k1 / b. Returns the share of questions whose top 10 at FTS5's
    k1 = 1.2, b = 0.75 equals the engine's (the check that this mirrors it)."""
    import sqlite3

    from engine.retrieval.query import plan

    tok = "porter unicode61 remove_diacritics 2"
    same = []
    for c, conv in zip(convs, data, strict=True):
        db = sqlite3.connect(":memory:")
        db.execute(f"CREATE VIRTUAL TABLE t USING fts5(content, tokenize='{tok}')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        texts = [turn_content(t, "speaker") for _, _, t in turns(conv)]
        db.executemany("INSERT INTO t(rowid, content) VALUES (?, ?)", list(enumerate(texts, 1)))
        vocab: dict[str, int] = {}
        rows = db.execute("SELECT term, doc FROM v").fetchall()
        for term, _ in rows:
            vocab.setdefault(term, len(vocab))
        tf = np.zeros((c["n"], len(vocab)))
        for term, doc in rows:
            tf[doc - 1, vocab[term]] += 1
        c["_tf"], c["_dl"] = tf, tf.sum(axis=1)
        c["_df"] = (tf > 0).sum(axis=0)
        for q in c["qs"]:
            qdb = sqlite3.connect(":memory:")
            qdb.execute(f"CREATE VIRTUAL TABLE t USING fts5(content, tokenize='{tok}')")
            qdb.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
            idx = []
            for w in plan(q["q"]).terms:  # each OR'd term, stemmed as FTS5 stems it
                qdb.execute("DELETE FROM t")
                qdb.execute("INSERT INTO t(content) VALUES (?)", (w,))
                idx += [vocab[x] for (x,) in qdb.execute("SELECT term FROM v") if x in vocab]
            q["_qt"] = idx
            mine, _ = bm25(c, q, 1.2, 0.75)
            top = [int(i) + 1 for i in np.argsort(-mine, kind="stable")[:10] if mine[i] > 0]
            same.append(set(top) == {m for m, _ in q["kw"][:10]})
    return float(np.mean(same))


def bm25(c: dict, q: dict, k1: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """(score per turn, rank per turn; 10**6 when unmatched): FTS5's BM25 with this k1 / b."""
    key = ("_bm25", k1, b)
    if key not in q:
        n, tf, dl = c["n"], c["_tf"], c["_dl"]
        score = np.zeros(n)
        norm = k1 * (1 - b + b * dl / dl.mean())
        for t in q["_qt"]:
            df = c["_df"][t]
            idf = max(np.log((n - df + 0.5) / (df + 0.5)), 1e-6)
            score += idf * tf[:, t] * (k1 + 1) / (tf[:, t] + norm)
        rank = np.full(n, 10**6)
        hit = np.flatnonzero(score > 0)
        order = hit[np.argsort(-score[hit], kind="stable")][:200]
        rank[order] = np.arange(1, len(order) + 1)
        q[key] = (np.where(rank <= 200, score, 0.0), rank)
    return q[key]
