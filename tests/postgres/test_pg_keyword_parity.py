"""Keyword parity: the same 200 memories and 20 queries on SQLite (FTS5) and PostgreSQL (the
engine's lexemes + BM25 in SQL) give the same keyword top 10, and the same BM25 scores. Phrases:
test_pg_phrase_parity; the cached corpus figures and a LoCoMo slice: test_pg_keyword_parity_at_scale."""

from __future__ import annotations

import random

import pytest

from engine import FixedClock, HashEmbedder, open_engine
from engine.retrieval.filters import Filters
from engine.retrieval.query import plan
from engine.storage.lexemes import lexemes
from engine.types import TIERS

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


# Where Snowball's porter and Unicode's current tables differ from FTS5's (Porter's C version,
# Unicode 6.1): undoubling in step 1b, "bli" -> "ble", emoji newer than 6.1, and friends.
TRICKY = [
    "trekked trekking revved revving bucked skiing hummed fizzed rolled missed",
    "incredibly possibly terribly humbly nobly sensibly feasibility",
    "🧘\u200d♀️ yoga 😀 smile 🦄 ♀ ☕ ✅ café naïve Åland ﬁ ligature",
    "biology analogies geologist chronological",
    "ᦰᦱ New Tai Lue ᳲ vedic",
]


def test_fts5_separators_are_probed_from_sqlite_itself():
    import sqlean as sqlite3

    from engine.storage.lexeme_separators import is_separator

    c = sqlite3.connect(":memory:")
    c.execute(
        "CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61 remove_diacritics 2', detail=none)"
    )
    cps = [cp for cp in range(0x80, 0x30000) if not 0xD800 <= cp <= 0xDFFF]
    c.executemany("INSERT INTO f(rowid, x) VALUES (?, ?)", ((cp, "q" + chr(cp) + "q") for cp in cps))
    separators = {r[0] for r in c.execute("SELECT rowid FROM f WHERE f MATCH 'q'")}
    assert separators, "the probe found no separators"
    assert [cp for cp in cps if is_separator(cp) != (cp in separators)] == []


def test_the_tokenizer_matches_fts5_on_the_corpus(tmp_path):
    import sqlean as sqlite3

    c = sqlite3.connect(":memory:")
    c.execute("CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')")
    c.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')")
    texts = _corpus() + QUERIES + TRICKY
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


CJK_TEXTS = [
    "東京タワーに行った。東京タワーは高い。",
    "東京で寿司を食べた tokyo trip",
    "大阪城と東京タワー",
    "我们在北京见面 Beijing meeting",
    "北京烤鸭很好吃,北京北京",
    "서울에서 만나요 seoul",
    "Tokyo TOKYO tokyo: the café in 東京",
    "aaaaa bc",
    "ab",
    "plain english text about tokyo towers",
]


CJK_QUERIES = ["東京タワー", "北京烤鸭", "北京见面 meeting", "서울에서", "東京タ tokyo", "大阪城"]


def test_cjk_and_substring_search_rank_as_fts5_trigram(pg_url, tmp_path):
    lite = open_engine(tmp_path / "c.db", embedder=HashEmbedder(), clock=FixedClock(T0), load="now")
    pg = open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now")
    try:
        for e in (lite, pg):
            e.add_memories([{"content": t} for t in CJK_TEXTS * 2], dedup=False)
            sid = e.sessions.add("s1", title="t")
            e.sessions.add_messages(sid, [{"role": "user", "content": t} for t in CJK_TEXTS])
        for q in CJK_QUERIES:
            p = plan(q)
            assert p.index == "trigram", q
            with lite.store.reading() as a, pg.store.reading() as b:
                want = lite.store.keyword.top(a, "trigram", p.match or "", 20)
                assert want, q
                assert pg.store.keyword.top(b, "trigram", p.match or "", 20) == want, q
                wf = lite.store.keyword.top_where(a, "trigram", p.match or "", Filters(TIERS), 20, above=3)
                assert (
                    pg.store.keyword.top_where(b, "trigram", p.match or "", Filters(TIERS), 20, above=3) == wf
                ), q
                for mid in (1, 2, 7):
                    assert pg.store.keyword.has(b, "trigram", p.match or "", mid) == lite.store.keyword.has(
                        a, "trigram", p.match or "", mid
                    ), (q, mid)
            hits = [[h.id for h in e.search(q, mode="keyword", record_access=False).hits] for e in (lite, pg)]
            assert hits[0] == hits[1], q
            msgs = [[h.message.id for h in e.sessions.search_messages(q, limit=10)] for e in (lite, pg)]
            assert msgs[0] and msgs[0] == msgs[1], q
        # explain's rank and score through the trigram index
        q = "東京タワー"
        xa, xb = lite.explain(q, 1, k=10, mode="keyword"), pg.explain(q, 1, k=10, mode="keyword")
        assert (xa.bm25_rank, xa.matched_terms) == (xb.bm25_rank, xb.matched_terms)
    finally:
        lite.close()
        pg.close()


def test_a_window_reads_newer_ids_only_with_the_whole_index_idf(engines):
    """The keyword bounds' window (`above`): only ids above it, scored with the whole index's
    document frequencies, as FTS5's `rowid > ?` does — cached frequencies included."""
    lite, pg = engines
    for q in QUERIES[:8]:
        match = plan(q).match or ""
        for above in (50, 150):
            with lite.store.reading() as a, pg.store.reading() as b:
                want = lite.store.keyword.top(a, "words", match, 10, above)
                assert want and all(i > above for i, _ in want), q
                assert pg.store.keyword.top(b, "words", match, 10, above) == want, (q, above)
                assert pg.store.keyword.top_where(b, "words", match, Filters(("active",)), 10, above) == (
                    lite.store.keyword.top_where(a, "words", match, Filters(("active",)), 10, above)
                ), (q, above)
