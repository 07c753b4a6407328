"""Keyword parity: the same 200 memories and 20 queries on SQLite (FTS5) and PostgreSQL (the
engine's lexemes + BM25 in SQL) give the same keyword top 10, and the same BM25 scores."""

from __future__ import annotations

import random

import pytest

from engine import FixedClock, HashEmbedder, open_engine
from engine.retrieval.query import plan
from engine.storage.postgres.lexemes import lexemes

T0 = "2026-01-01T00:00:00Z"
WORDS = [
    "deploy",
    "deploying",
    "deployment",
    "deployed",
    "script",
    "scripts",
    "running",
    "runner",
    "ran",
    "database",
    "databases",
    "backup",
    "backups",
    "nightly",
    "postgres",
    "postgresql",
    "vector",
    "vectors",
    "search",
    "searching",
    "searched",
    "memory",
    "memories",
    "agent",
    "agents",
    "forget",
    "forgetting",
    "forgotten",
    "audit",
    "audits",
    "chain",
    "chains",
    "console",
    "consoles",
    "operator",
    "operators",
    "keyword",
    "keywords",
    "ranking",
    "ranked",
    "rank",
    "generalization",
    "connection",
    "connections",
    "café",
    "naïve",
    "résumé",
    "Zürich",
    "configuration",
    "configure",
    "configured",
    "relational",
    "happiness",
    "hopeful",
    "tea",
    "coffee",
    "morning",
    "evening",
    "hiking",
    "alps",
    "mountain",
    "mountains",
    "river",
    "rivers",
    "city",
    "cities",
    "2026",
    "v18",
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "is",
    "it",
    "for",
    "on",
    "with",
    "as",
    "at",
    "by",
    "from",
    "terminology",
    "biology",
    "electricity",
]


def _corpus(n: int = 200) -> list[str]:
    rnd = random.Random(14)
    out = []
    for i in range(n):
        size = rnd.randint(3, 40)
        words = [rnd.choice(WORDS) for _ in range(size)]
        if i % 7 == 0:
            words = [w.upper() for w in words]
        out.append(" ".join(words) + f". Note {i}, item-{i % 13}!")
    return out


QUERIES = [
    "deploy script",
    "databases backups nightly",
    "searching vectors",
    "forgotten memories",
    "audit chain",
    "operators consoles",
    "ranking keywords",
    "generalization",
    "cafe naive resume",
    "Zürich configuration",
    "happiness hopeful",
    "tea and coffee in the morning",
    "hiking mountains rivers",
    "cities",
    "2026 v18",
    "terminology biology",
    "electricity connection",
    "relational database",
    "postgresql postgres",
    "agent running runner ran",
]


@pytest.fixture
def engines(pg_url, tmp_path):
    texts = _corpus()
    lite = open_engine(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(T0), load="now")
    pg = open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now")
    for e in (lite, pg):
        e.add_memories([{"content": t} for t in texts], dedup=False)
    yield lite, pg
    lite.close()
    pg.close()


def _index_top(eng, query: str) -> list[tuple[int, float]]:
    p = plan(query)
    with eng.store.reading() as conn:
        return eng.store.keyword.top(conn, "words", p.match or "", 10)


def test_the_tokenizer_matches_fts5_on_the_corpus(tmp_path):
    import sqlean as sqlite3

    c = sqlite3.connect(":memory:")
    c.execute("CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')")
    c.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
    texts = _corpus() + QUERIES
    for i, t in enumerate(texts):
        c.execute("INSERT INTO f(rowid, x) VALUES (?, ?)", (i, t))
    got: dict[int, list[str]] = {}
    for doc, term in c.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
        got.setdefault(doc, []).append(term)
    assert [got.get(i, []) for i in range(len(texts))] == [lexemes(t) for t in texts]


def test_keyword_top10_equals_sqlite(engines):
    lite, pg = engines
    same, report = 0, []
    for q in QUERIES:
        a, b = _index_top(lite, q), _index_top(pg, q)
        assert a, q
        for (ia, sa), (ib, sb) in zip(a, b, strict=False):
            assert sa == sb, (q, ia, sa, ib, sb)  # FTS5's bm25() to the bit
        ids_equal = [i for i, _ in a] == [i for i, _ in b]
        hits_equal = [h.id for h in lite.search(q, mode="keyword", record_access=False).hits] == [
            h.id for h in pg.search(q, mode="keyword", record_access=False).hits
        ]
        same += ids_equal and hits_equal
        if not (ids_equal and hits_equal):
            report.append(q)
    rate = same / len(QUERIES)
    print(f"keyword top-10 parity: {same}/{len(QUERIES)} = {rate:.0%}; differ: {report}")
    assert rate == 1.0, report


def test_message_search_equals_sqlite(pg_url, tmp_path):
    texts = _corpus(120)
    got = []
    for e in (
        open_engine(tmp_path / "s.db", embedder=HashEmbedder(), clock=FixedClock(T0), load="now"),
        open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now"),
    ):
        sid = e.sessions.add("s1", title="t")
        e.sessions.add_messages(sid, [{"role": "user", "content": t} for t in texts])
        got.append([[h.message.id for h in e.sessions.search_messages(q, limit=10)] for q in QUERIES])
        e.close()
    assert got[0] == got[1]
