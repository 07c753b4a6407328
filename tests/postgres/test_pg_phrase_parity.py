"""Keyword parity, phrases: a quoted term of several tokens is a phrase on PostgreSQL as in FTS5
(split from test_pg_keyword_parity)."""

from __future__ import annotations

import pytest

from engine import FixedClock, HashEmbedder, open_engine
from tests.postgres.test_pg_keyword_parity import T0

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
