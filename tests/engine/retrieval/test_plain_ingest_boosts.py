"""Ranking on a plain ingest (issue #26): a chat log stored as it arrives — content "Name: text",
created_at the message time, no metadata — still gets the named-speaker and named-date boosts
(speaker from the leading "Name:", date from created_at), and a question asking *when* favours the
memory that says when. Each engine test fails on the code before: it read metadata only and had no
time boost."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

pytestmark = pytest.mark.backends  # the boosts are the engine's, whichever store answers

FILLER = [{"content": f"filler note {i} about the weather and the garden"} for i in range(20)]


def _search(eng, q: str, k: int = 3):
    return eng.search(q, k=k, mode="hybrid", record_access=False).hits


def _off(eng, **change):
    """Set search settings; one the code does not know (the code before) is left as it is."""
    known = {k: v for k, v in change.items() if hasattr(eng.settings.search, k)}
    eng.settings = replace(eng.settings, search=replace(eng.settings.search, **known))


def test_speaker_from_a_leading_name(eng):
    """No metadata: Caroline's turn repeats the question's words; the question asks what Melanie
    made, so Melanie's turn ("Melanie: ...") is lifted above it."""
    ids = eng.add_memories(
        [
            {
                "content": "Caroline: Melanie, the pottery class was great, I made a bowl at pottery class",
                "session_id": "a",
            },
            {"content": "Melanie: I made a mug at my pottery class", "session_id": "b"},
            *FILLER,
        ],
        dedup=False,
    )
    q = "What did Melanie make at pottery class?"
    _off(eng, speaker_boost=0.0)
    assert _search(eng, q)[0].id == ids[0]  # the words alone favour Caroline's turn
    _off(eng, speaker_boost=0.25)
    hits = _search(eng, q)
    assert hits[0].id == ids[1]
    assert hits[0].breakdown.boost == pytest.approx(1.25)
    assert next(h for h in hits if h.id == ids[0]).breakdown.boost == 1.0
    assert "said by Melanie" in eng.explain(q, ids[1], k=3).summary


def _at(y: int, m: int, d: int) -> float:
    return datetime(y, m, d, 15, 0, tzinfo=UTC).timestamp()


def test_date_from_created_at_down_to_the_day(eng):
    """Two turns of October 2023, no metadata; the question names October 13, 2023: the turn
    written that day goes first though the other one matches more of its words."""
    ids = eng.add_memories(
        [
            {"content": "Melanie: here is my painting of the lake", "created_at": _at(2023, 10, 13)},
            {
                "content": "Melanie: a painting I showed you, my painting of the lake at sunset",
                "created_at": _at(2023, 10, 20),
            },
            *FILLER,
        ],
        dedup=False,
    )
    q = "What painting did Melanie show on October 13, 2023?"
    hits = _search(eng, q)
    assert hits[0].id == ids[0], [h.content for h in hits]
    assert hits[0].breakdown.boost > next(h for h in hits if h.id == ids[1]).breakdown.boost
    _off(eng, date_boost=0.0)
    assert _search(eng, q)[0].id == ids[1]  # without the date boost the words decide


def test_when_question_favours_a_time_expression(eng):
    """'When did Caroline go to the support group?': the turn that says when ("yesterday") is
    first, above one that repeats the question's words but names no time."""
    ids = eng.add_memories(
        [
            {"content": "Caroline: the support group was a great support group, I go to the group"},
            {"content": "Caroline: I went to a support group yesterday"},
            *FILLER,
        ],
        dedup=False,
    )
    q = "When did Caroline go to the support group?"
    _off(eng, time_boost=0.0)
    assert _search(eng, q)[0].id == ids[0]  # the words alone
    _off(eng, time_boost=1.0)
    hits = _search(eng, q)
    assert hits[0].id == ids[1]
    assert hits[0].breakdown.boost > 1.0
    assert "asks when" in eng.explain(q, ids[1], k=3).summary
    # a question that does not ask when leaves the time expression alone
    other = _search(eng, "What was said about the support group?")
    assert all(h.breakdown.boost == 1.0 or h.id != ids[1] for h in other)


def test_metadata_still_wins_over_the_text(eng):
    """metadata.speaker, where set, is the speaker — not a "Name:" the text happens to start with."""
    ids = eng.add_memories(
        [
            {"content": "Melanie: said Caroline, quoting her friend", "metadata": {"speaker": "Caroline"}},
            {"content": "Melanie: I quoted my friend"},
            *FILLER,
        ],
        dedup=False,
    )
    hits = _search(eng, "What did Caroline quote her friend?", k=5)
    boosted = {h.id for h in hits if h.breakdown.boost > 1.0}
    assert ids[0] in boosted and ids[1] not in boosted


def test_explain_names_only_the_boosts_that_apply(eng):
    """A question naming Caroline and asking when: Caroline's turn without a time is lifted as
    hers only; explain does not claim it carries a time expression."""
    ids = eng.add_memories(
        [
            {"content": "Caroline: the support group was a great support group"},
            {"content": "Melanie: I went to a support group yesterday"},
            *FILLER,
        ],
        dedup=False,
    )
    q = "When did Caroline go to the support group?"
    hits = _search(eng, q, k=5)
    assert {h.id for h in hits} >= set(ids[:2])
    x = eng.explain(q, ids[0], k=5).summary
    assert "said by Caroline" in x and "asks when" not in x
    y = eng.explain(q, ids[1], k=5).summary
    assert "asks when" in y and "said by" not in y


def test_speaker_from_the_message_role(eng):
    """A memory made from a message, with no "Name:" and no metadata: the message's role is its
    speaker, so "what did the user ask ..." lifts what the user said."""
    sid = eng.sessions.add("chat1", agent="atlas")
    said_by_user = eng.sessions.add_message(sid, "user", "which colour theme for the app")
    said_by_bot = eng.sessions.add_message(sid, "assistant", "the app theme: a colour theme in blue")
    ids = [
        eng.add_memory("which colour theme for the app", message_id=said_by_user, dedup=False),
        eng.add_memory("the app theme: a colour theme in blue", message_id=said_by_bot, dedup=False),
    ]
    eng.add_memories(FILLER, dedup=False)
    q = "What app theme did the user ask about?"
    _off(eng, speaker_boost=0.0)
    first = _search(eng, q)
    assert first[0].id == ids[1], [(h.content, h.score) for h in first]  # the words alone
    _off(eng, speaker_boost=1.0)
    hits = _search(eng, q)
    assert hits[0].id == ids[0] and hits[0].breakdown.boost == pytest.approx(2.0)
