"""Keyword parity: the same 200 memories and 20 queries on SQLite (FTS5) and PostgreSQL (the
engine's lexemes + BM25 in SQL) give the same keyword top 10, and the same BM25 scores."""

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


PHRASE_TEXTS = [
    "we met at ten o'clock by the river",
    "the clock said ten, o what a morning",
    "o'clock o'clock: twice o'clock",
    "send the e-mail before the e mail server restarts",
    "an email about e-mail e-mail e-mail",
    "version v1.2 shipped; v1 2 was skipped",
    "rock'n'roll and rock n roll are the same",
    "clock o clock, o-clock",
    "nothing to see here",
] * 3


PHRASE_QUERIES = [
    '"o\'clock"',
    '"e-mail"',
    '"v1.2"',
    "\"rock'n'roll\"",
    '"o\'clock" OR "river"',
    '"e mail" OR "email"',
]


@pytest.fixture
def phrase_engines(pg_url, tmp_path):
    lite = open_engine(tmp_path / "p.db", embedder=HashEmbedder(), clock=FixedClock(T0), load="now")
    pg = open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now")
    for e in (lite, pg):
        e.add_memories([{"content": t} for t in PHRASE_TEXTS], dedup=False)
    yield lite, pg
    lite.close()
    pg.close()


def test_a_quoted_term_of_several_tokens_is_a_phrase_as_in_fts5(phrase_engines):
    lite, pg = phrase_engines
    for match in PHRASE_QUERIES:
        with lite.store.reading() as a, pg.store.reading() as b:
            want = lite.store.keyword.top(a, "words", match, 50)
            got = pg.store.keyword.top(b, "words", match, 50)
            assert want, match
            assert got == want, match  # the same documents, the same bm25 to the bit
            assert pg.store.keyword.doc_freq(b, match) == lite.store.keyword.doc_freq(a, match)
            for mid in (1, 2, 3, 7, 8):
                assert pg.store.keyword.has(b, "words", match, mid) == lite.store.keyword.has(
                    a, "words", match, mid
                )
    # the engine's own query path reaches it: "o'clock" stays one quoted word, two tokens
    assert [h.id for h in pg.search("o'clock", mode="keyword", record_access=False).hits] == [
        h.id for h in lite.search("o'clock", mode="keyword", record_access=False).hits
    ]


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


def test_corpus_figures_are_cached_on_big_sources_and_reread_when_ids_move(pg_url, monkeypatch):
    from engine.storage.postgres import keyword_stats

    pg = open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now")
    try:
        pg.add_memories([{"content": f"deploy note {i}"} for i in range(30)], dedup=False)
        stats = pg.store.keyword.stats
        with pg.store.reading() as c:
            small = stats.get(c, "memories")
            assert stats.get(c, "memories") is not small  # below EXACT_BELOW: read every time
        monkeypatch.setattr(keyword_stats, "EXACT_BELOW", 10)
        with pg.store.reading() as c:
            first = stats.get(c, "memories")
            assert stats.get(c, "memories") is first  # cached
        pg.add_memories([{"content": "deploy again"}], dedup=False)  # 1 new id of 30: under 10%
        with pg.store.reading() as c:
            assert stats.get(c, "memories") is first
        pg.add_memories([{"content": f"deploy more {i}"} for i in range(5)], dedup=False)
        with pg.store.reading() as c:
            again = stats.get(c, "memories")
            assert again is not first and again.n == 36
        monkeypatch.setattr(keyword_stats, "STATS_TTL_S", -1.0)
        with pg.store.reading() as c:
            assert stats.get(c, "memories") is not again  # past the time limit: re-read
    finally:
        pg.close()


def _locomo() -> list[dict]:
    import json
    import os
    from pathlib import Path

    env = os.environ.get("MEMCONSOLE_LOCOMO")
    path = Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo"
    if path.is_dir():
        path = path / "locomo_dev.json"
    if not path.is_file():
        pytest.skip(f"LoCoMo data not found at {path} (set MEMCONSOLE_LOCOMO)")
    return json.loads(path.read_text(encoding="utf-8"))


def test_locomo_slice_keyword_top10_and_hybrid_recall_match_sqlite(pg_url, tmp_path):
    """A fast slice of bench/pg_parity.py (which runs all five conversations with MiniLM): one
    conversation, its first 60 questions, the hash embedder on both sides."""
    conv = _locomo()[1]
    items, n = [], 1
    while f"session_{n}" in conv["conversation"]:
        for t in conv["conversation"][f"session_{n}"]:
            items.append(
                {"content": f"{t['speaker']}: {t['text']}", "session_id": f"s{n}", "dia": t["dia_id"]}
            )
        n += 1
    questions = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4)][:60]
    sides = []
    for e in (
        open_engine(tmp_path / "l.db", embedder=HashEmbedder(), clock=FixedClock(T0), load="now"),
        open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now"),
    ):
        ids = e.add_memories(
            [{"content": i["content"], "session_id": i["session_id"]} for i in items], dedup=False
        )
        pos = {mid: k for k, mid in enumerate(ids)}
        by_dia = {i["dia"]: k for k, i in enumerate(items)}
        kw, found = [], 0
        for q in questions:
            kw.append(
                [pos[h.id] for h in e.search(q["question"], k=10, mode="keyword", record_access=False).hits]
            )
            hy = [pos[h.id] for h in e.search(q["question"], k=10, mode="hybrid", record_access=False).hits]
            found += any(by_dia.get(x) in hy for x in q.get("evidence", []))
        sides.append((kw, found / len(questions)))
        e.close()
    (kw_lite, r10_lite), (kw_pg, r10_pg) = sides
    same = sum(a == b for a, b in zip(kw_lite, kw_pg, strict=True)) / len(questions)
    print(f"keyword top 10 identical {same:.1%}; hybrid R@10 {r10_lite:.3f} vs {r10_pg:.3f}")
    assert same >= 0.99
    assert abs(r10_lite - r10_pg) <= 0.01


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
