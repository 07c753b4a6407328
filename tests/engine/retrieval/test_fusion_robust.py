"""Hybrid fusion that holds on conversations it was never tuned on (bench/locomo_loo.py): a question
naming a speaker or a time lifts that speaker's memories / memories of that time
(SearchSettings.speaker_boost, date_boost), and the breakdown and explain account for it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from engine.config import SearchSettings
from engine.retrieval import fusion
from engine.retrieval.query import named_one, named_time

pytestmark = pytest.mark.backends  # fusion is the engine's, whichever store answers


def _with(eng, **change):
    eng.settings = replace(eng.settings, search=replace(eng.settings.search, **change))


@pytest.fixture
def chat(eng):
    """Two speakers' turns; the words of a question about one of them fit the other's turn better."""
    turns = [
        ("Caroline", "8 May, 2023", "the pottery class was great, I made a bowl at pottery class"),
        ("Melanie", "3 July, 2023", "I made a mug at my pottery class"),
        ("Caroline", "3 July, 2023", "we went camping by the lake with the kids"),
        ("Melanie", "8 May, 2023", "we went camping in the mountains, the kids loved the lake"),
    ]
    ids = eng.add_memories(
        [
            {"content": text, "session_id": f"s{i}", "metadata": {"speaker": who, "date": date}}
            for i, (who, date, text) in enumerate(turns)
        ],
        dedup=False,
    )
    eng.add_memories([{"content": f"filler note {i} about the weather"} for i in range(20)], dedup=False)
    return eng, ids


def test_named_speaker_lifts_their_turn(chat):
    """Caroline's turn repeats 'pottery class'; the question asks what Melanie made. Without the
    speaker boost (the fusion before) Caroline's turn is first; with it, Melanie's."""
    eng, ids = chat
    q = "What did Melanie make at pottery class?"
    _with(eng, speaker_boost=0.0, date_boost=0.0)
    assert eng.search(q, k=3, mode="hybrid", record_access=False).hits[0].id == ids[0]
    _with(eng, speaker_boost=SearchSettings().speaker_boost)
    hits = eng.search(q, k=3, mode="hybrid", record_access=False).hits
    assert hits[0].id == ids[1]
    b = hits[0].breakdown
    assert b.boost == pytest.approx(1 + eng.settings.search.speaker_boost)
    assert next(h for h in hits if h.id == ids[0]).breakdown.boost == 1.0
    # the breakdown adds up: final = (rrf x boost + context) x state factor
    assert f"× boost {b.boost:.2f}" in fusion.weight_numbers(b, eng.settings.search)
    assert f"= {b.final:.4f}" in fusion.weight_numbers(b, eng.settings.search)
    # keyword-only search stays a pure retriever
    kw = eng.search(q, k=3, mode="keyword", record_access=False).hits
    assert kw[0].id == ids[0] and all(h.breakdown.boost == 1.0 for h in kw)


def test_named_month_lifts_turns_of_that_time(chat):
    """Two camping turns; the question names May 2023, when Melanie's was said."""
    eng, ids = chat
    q = "Where did they go camping by the lake with the kids in May 2023?"
    _with(eng, speaker_boost=0.0, date_boost=0.0)
    assert eng.search(q, k=3, mode="hybrid", record_access=False).hits[0].id == ids[2]
    _with(eng, date_boost=SearchSettings().date_boost)
    hits = eng.search(q, k=3, mode="hybrid", record_access=False).hits
    assert hits[0].id == ids[3]
    assert hits[0].breakdown.boost == pytest.approx(1 + eng.settings.search.date_boost)


def test_explain_names_the_boost_and_scores_like_search(chat):
    eng, ids = chat
    q = "What did Melanie make at pottery class?"
    x = eng.explain(q, ids[1], k=3)
    assert x.in_top_k and "said by Melanie" in x.summary
    # a boosted memory outside the top k: explain's would-be score equals search's at a larger k
    wide = eng.search("Melanie camping lake kids", k=10, record_access=False).hits
    boosted = [h for h in wide if h.breakdown.boost > 1.0]
    assert boosted
    last = boosted[-1]
    k = [h.id for h in wide].index(last.id)  # k hits end just before it
    if k == 0:
        pytest.skip("the boosted memory is first")
    y = eng.explain("Melanie camping lake kids", last.id, k=k)
    assert not y.in_top_k
    assert y.final == pytest.approx(last.score, abs=1e-5)


def test_memory_without_a_date_is_dated_when_written(eng, clock):
    """No metadata date: the month it was written is its date. Two notes alike, written 40 days
    apart; naming the first one's month puts it first."""
    first = eng.add_memory("budget review notes from the meeting", dedup=False)
    clock.advance(40 * 86400)
    later = eng.add_memory("budget review notes: the budget review went well", dedup=False)
    eng.add_memories([{"content": f"filler note {i} about the weather"} for i in range(20)], dedup=False)
    t = datetime.fromtimestamp(eng.memories.get(first).created_at, UTC)
    q = f"budget review notes from {t:%B %Y}"
    _with(eng, date_boost=0.0)
    assert eng.search(q, k=2, mode="hybrid", record_access=False).hits[0].id == later
    _with(eng, date_boost=SearchSettings().date_boost)
    hits = eng.search(q, k=2, mode="hybrid", record_access=False).hits
    assert hits[0].id == first and hits[0].breakdown.boost > 1.0
    assert hits[1].breakdown.boost == 1.0


def test_what_a_question_names():
    assert named_time("When did Melanie go camping in June?") == (6, None)
    assert named_time("What painting did she show on October 13, 2023?") == (10, 2023)
    assert named_time("1:56 pm on 8 May, 2023") == (5, 2023)
    assert named_time("What may Caroline do next?") == (None, None)  # the verb, not the month
    assert named_time("plans for 2024") == (None, 2024)
    assert named_one("What did Melanie paint?", {"Melanie", "Caroline"}) == "Melanie"
    assert named_one("Did Melanie and Caroline meet?", {"Melanie", "Caroline"}) is None  # both: no boost
    assert named_one("What did Mel paint?", {"Melanie"}) is None  # whole words only
    # a memory's date: its metadata's (prose or ISO), else when it was written
    assert fusion.when({"date": "1:56 pm on 8 May, 2023"}, None) == (5, 2023)
    assert fusion.when({"date": "2024-03-09T10:00:00Z"}, None) == (3, 2024)
    assert fusion.when({"date": "sometime"}, 1_700_000_000) == (11, 2023)
