"""Hybrid search that explains itself."""

import pytest

from engine import InvalidInput, open_engine

pytestmark = pytest.mark.backends

HOSTILE = [
    '"unbalanced',
    "AND",
    "NOT",
    "(x",
    "v1.2 @nasa who's",
    "ask-codex",
    "*",
    "x" * 100_000,
    "a\x00b",
    "大别山",
    "山",
    "x\ud800y",
    "",
    "NEAR(a b)",
    "col:value",
    "'; DROP TABLE memories;--",
]


def test_paraphrase_ranks_first_with_both_retrievers(real_eng):
    mid = real_eng.add_memory("The user prefers dark mode in every editor")
    real_eng.add_memories(
        [
            {"content": t}
            for t in (
                "Deploys run on Tuesdays after the standup",
                "The staging database is refreshed weekly",
                "Lee prefers short pull requests",
                "The API gateway times out after 30 seconds",
            )
        ]
    )
    r = real_eng.search("which colour theme does the user like")
    assert r.mode == "hybrid" and r.hits[0].id == mid
    b = r.hits[0].breakdown
    assert b.bm25_rank is not None and b.vector_rank == 1 and b.vector_similarity > 0.3
    assert b.final == r.hits[0].score


@pytest.mark.parametrize("q", HOSTILE)
def test_no_query_text_makes_search_raise(eng, q):
    eng.add_memory("ask-codex about v1.2 at nasa 大别山 山")
    r = eng.search(q)
    assert r.mode in ("hybrid", "keyword")
    assert isinstance(r.hits, list)


def test_cjk_memory_search(eng):
    mid = eng.add_memory("用户喜欢秋天去大别山爬山")
    eng.add_memory("unrelated english text")
    assert eng.search("大别山", mode="keyword").hits[0].id == mid
    assert eng.search("山", mode="keyword").hits[0].id == mid


def test_natural_questions_need_not_match_every_word(eng):
    mid = eng.add_memory("Jenkins is retired after March 31")
    r = eng.search("when exactly was jenkins retired by the team?", mode="keyword")
    assert r.hits and r.hits[0].id == mid


def test_filters_apply_inside_both_retrievers(eng):
    # 30 close matches for another agent would crowd a post-filter out of the top k.
    eng.add_memories(
        [{"content": f"backup restore drill number {i}", "agent": "other"} for i in range(30)], dedup=False
    )
    mine = eng.add_memories(
        [{"content": f"backup restore note {i}", "agent": "atlas"} for i in range(3)], dedup=False
    )
    for mode in ("keyword", "vector", "hybrid"):
        r = eng.search("backup restore drill", k=3, agent="atlas", mode=mode)
        assert sorted(h.id for h in r.hits) == sorted(mine), mode
    r = eng.search("backup restore", k=5, kind="procedural")
    assert r.hits == []


def test_archived_memories_are_excluded_but_reported_elsewhere(eng):
    mid = eng.add_memory("the old VPN endpoint is vpn2.example.com")
    eng.memories.archive(mid)
    sid = eng.sessions.add("s", title="vpn chat")
    eng.sessions.add_message(sid, "user", "what was the VPN endpoint again?")
    r = eng.search("VPN endpoint", mode="keyword")
    assert r.hits == []
    assert r.elsewhere["other_tiers"]["ids"] == [mid]
    assert r.elsewhere["messages"]["sessions"] == ["s"]
    assert eng.search("VPN endpoint", tier="archived").hits[0].id == mid


def test_search_records_access_unless_told_not_to(eng, clock):
    mid = eng.add_memory("coffee machine is on floor three")
    eng.search("coffee machine", record_access=False)
    assert eng.memories.get(mid).access_count == 0
    clock.advance(60)
    eng.search("coffee machine")
    m = eng.memories.get(mid)
    assert m.access_count == 1 and m.last_accessed_at == clock.now()


def test_keyword_only_until_a_model_is_ready(db_path, clock):
    e = open_engine(db_path, embedder=None, clock=clock)
    mid = e.add_memory("printer on floor two jams on A3 paper")
    r = e.search("printer jams")
    assert r.mode == "keyword" and r.hits[0].id == mid and "keyword-only" in r.message
    assert r.hits[0].breakdown.vector_rank is None
    e.close()


def test_bad_arguments_are_invalid_input(eng):
    for kw in ({"k": 0}, {"mode": "fuzzy"}, {"tier": "hot"}, {"kind": "dream"}):
        with pytest.raises(InvalidInput):
            eng.search("x", **kw)


def test_explain_gives_full_rank_beyond_top_k(eng):
    eng.add_memories([{"content": f"kafka consumer lag alert {i}"} for i in range(15)], dedup=False)
    target = eng.add_memory("kafka broker disk nearly full, lag alert followed", dedup=False)
    ex = eng.explain("kafka consumer lag alert", target, k=5)
    assert ex.found and not ex.in_top_k
    assert ex.bm25_rank is not None and ex.bm25_rank > 5 and ex.bm25_matches == 16
    assert set(ex.matched_terms) == {"kafka", "lag", "alert"} and ex.unmatched_terms == ["consumer"]
    assert ex.vector_rank is not None and ex.vector_similarity is not None
    assert ex.kth_final is not None and ex.final is not None and ex.final <= ex.kth_final
    assert "not in the top 5" in ex.summary and "consumer" in ex.summary


def test_explain_names_the_filter_or_state_that_excludes(eng):
    mid = eng.add_memory("quarterly tax lots go to the accountant", agent="trader")
    eng.memories.archive(mid)
    ex = eng.explain("tax lots accountant", mid, agent="atlas")
    assert not ex.in_top_k
    assert any("archived" in e for e in ex.excluded_by) and any("agent" in e for e in ex.excluded_by)
    assert ex.bm25_rank == 1  # ranked among everything, so the operator sees it would match
    assert "outside the searched set" in ex.summary


def test_explain_unknown_id_and_no_matching_words(eng):
    assert not eng.explain("anything", 424242).found
    mid = eng.add_memory("lunch is at noon")
    ex = eng.explain("quantum chromodynamics", mid)
    assert ex.bm25_rank is None and "none of the query's words" in ex.summary
