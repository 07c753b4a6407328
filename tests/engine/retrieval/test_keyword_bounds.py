"""The keyword retriever's cost bounds on big databases (engine/keyword.py), with the size floors
lowered so a few hundred memories show them: common words left out, commoner words scored over the
newest memories only, exact BM25 inside that window, and explain saying what happened."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.retrieval.filters import Filters

pytestmark = pytest.mark.backends


def bounded(eng, rows=30, candidates=10, share=0.0):
    s = eng.settings.search
    eng.settings = replace(
        eng.settings,
        search=replace(
            s, common_terms_from=10, common_term_share=share, keyword_rows=rows, candidates=candidates
        ),
    )


@pytest.fixture
def corpus(eng):
    """200 memories with 'status' (ids 1..200, every 4th by agent 'ops'), one old memory with the
    rare word 'zeppelin' (id 3), and lengths that vary so BM25 scores differ."""
    items = []
    for i in range(200):
        extra = " padding" * (i % 7)
        word = "zeppelin hangar" if i == 2 else f"item{i}"
        items.append({"content": f"status report {word}{extra}", "agent": "ops" if i % 4 == 0 else "dev"})
    return eng.add_memories(items, dedup=False)


def test_common_word_scored_over_newest_memories_only(eng, corpus):
    bounded(eng)
    p = eng.retrieval.keyword_plan("status")
    assert p.windowed == (("status", 200),) and p.recent_from is not None
    assert 150 <= p.recent_from < 200  # a window sized to ~30 of 200 matches
    ranks = eng.retrieval.keyword_ranks(p, Filters(), 10)
    assert len(ranks) == 10 and all(mid > p.recent_from for mid in ranks)


def test_window_scores_are_exact_bm25(eng, corpus):
    """Inside the window each memory keeps the score the unbounded query gives it."""
    bounded(eng)
    windowed = eng.retrieval.keyword_ranks(eng.retrieval.keyword_plan("status report"), Filters(), 10)
    bounded(eng, rows=0)
    exact = eng.retrieval.keyword_ranks(eng.retrieval.keyword_plan("status report"), Filters(), 500)
    assert len(exact) == 200
    for mid, (_, score) in windowed.items():
        assert score == pytest.approx(exact[mid][1], rel=1e-9)


def test_rare_word_scored_everywhere_and_ranks_first(eng, corpus):
    """'zeppelin' (1 memory, the oldest few) fits the budget: scanned over every memory, so an old
    memory with it still comes first although 'status' is only scored in the window."""
    bounded(eng)
    p = eng.retrieval.keyword_plan("status zeppelin")
    assert [t for t, _ in p.windowed] == ["status"] and "zeppelin" in p.terms
    hits = eng.search("status zeppelin", k=5, mode="keyword", record_access=False).hits
    assert "zeppelin" in hits[0].content and hits[0].id <= p.recent_from


def test_narrow_filter_widens_the_window(eng, corpus):
    """A filter that leaves fewer than n matches in the window widens it rather than returning
    short: 'ops' holds 50 of the 200, so n=40 needs most of the id range."""
    bounded(eng)
    p = eng.retrieval.keyword_plan("status")
    ranks = eng.retrieval.keyword_ranks(p, Filters.make(None, None, None, "ops", None), 40)
    assert len(ranks) == 40
    assert min(ranks) <= p.recent_from


def test_common_words_left_out_and_bounds_off(eng, corpus):
    bounded(eng, share=0.5)
    p = eng.retrieval.keyword_plan("status zeppelin")
    assert p.terms == ("zeppelin",) and p.dropped == (("status", 200),) and p.recent_from is None
    bounded(eng, rows=0, share=0.0)
    p = eng.retrieval.keyword_plan("status zeppelin")
    assert p.dropped == () and p.windowed == () and p.recent_from is None


def test_explain_reports_the_bounds(eng, corpus):
    bounded(eng)
    x = eng.explain("status", corpus[5], mode="keyword")
    assert x.bm25_rank is not None and x.bm25_matches == 200  # rank is over every match
    assert any("newest memories only" in s for s in x.keyword_scope)
    assert any("older" in s and "none of the rarer words" in s for s in x.keyword_scope)
    assert "newest memories only" in x.summary
    bounded(eng, share=0.5)
    x = eng.explain("status zeppelin", corpus[2], mode="keyword")
    assert any("too common" in s and "status (200 memories)" in s for s in x.keyword_scope)
    assert x.bm25_rank == 1


def test_small_databases_are_never_bounded(eng, corpus):
    """Defaults: 201 memories are far under both floors, so no document frequency is even read."""
    p = eng.retrieval.keyword_plan("status zeppelin")
    assert p.dropped == () and p.recent_from is None
    stats = eng.retrieval.keyword.stats
    assert stats is not None and stats.df == {}


def test_search_result_says_how_the_keyword_query_was_bounded(eng, corpus):
    bounded(eng, share=0.5)
    res = eng.search("status zeppelin", k=3, mode="keyword", record_access=False)
    assert res.keyword_scope == ["left out as too common: status"]
    bounded(eng)
    res = eng.search("status", k=3, mode="keyword", record_access=False)
    assert len(res.keyword_scope) == 1 and res.keyword_scope[0].startswith("scored over memories above id")
    assert eng.search("status", k=3, mode="vector", record_access=False).keyword_scope == []
    bounded(eng, rows=0)
    assert eng.search("status", k=3, mode="keyword", record_access=False).keyword_scope == []
