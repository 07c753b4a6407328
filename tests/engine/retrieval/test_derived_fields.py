"""The derivations hybrid search's boosts read when a memory has no metadata (issue #26):
speaker from a leading "Name:", the date down to the day from created_at or a metadata date,
whether a text carries a time expression, and whether a question asks when."""

from __future__ import annotations

from datetime import UTC, datetime

from engine.retrieval import fusion
from engine.retrieval.derived import has_time, speaker_in
from engine.retrieval.query import asks_when, named_day


def test_speaker_from_a_leading_name():
    assert speaker_in("Caroline: I went to a support group yesterday") == "Caroline"
    assert speaker_in("  Mary Ann Lee: hello there") == "Mary Ann Lee"
    assert speaker_in("User: what is the plan?") == "User"  # a message role is a speaker
    assert speaker_in("Note: the deploy key rotates monthly") is None  # a label, not a person
    assert speaker_in("TODO: fix the cron job") is None
    assert speaker_in("caroline: lower case is not a name") is None
    assert speaker_in("10:30 standup moved") is None
    assert speaker_in("see http://example.com: it explains") is None
    assert speaker_in("Caroline:") is None  # nothing said
    assert speaker_in("") is None and speaker_in(None) is None
    # metadata.speaker wins; the text is read only without it
    assert fusion.speaker_of({"speaker": "Bob"}, "Alice: hi") == "Bob"
    assert fusion.speaker_of({}, "Alice: hi") == "Alice"


def test_date_from_created_at():
    t = datetime(2023, 10, 13, 21, 30, tzinfo=UTC).timestamp()
    assert fusion.when({}, t) == (10, 2023)
    assert fusion.day_of({}, t) == 13
    assert fusion.day_of({"date": "1:56 pm on 8 May, 2023"}, t) == 8  # the metadata's date first
    assert fusion.day_of({"date": "2024-03-09T10:00:00Z"}, t) == 9
    assert fusion.day_of({}, None) is None
    said = fusion.said({}, "Melanie: the lake", t, fusion.Named("Melanie", 10, 2023, 13, True))
    assert said == fusion.Said("Melanie", 10, 2023, 13, False)


def test_time_expressions():
    for text in (
        "I went to a LGBTQ support group yesterday",
        "I painted that lake sunrise last year",
        "I turned 18 ten years ago",
        "we are going camping next month",
        "it happened on Friday",
        "back in June we moved",
        "we moved in 2019",
    ):
        assert has_time(text), text
    for text in ("we may go camping", "the support group is great", "I made 3 mugs", ""):
        assert not has_time(text), text


def test_questions_asking_when():
    for q in (
        "When did Caroline go to the LGBTQ support group?",
        "when is Melanie planning on going camping?",
        "How long ago was Caroline's 18th birthday?",
        "How long has Caroline had her current group of friends for?",
        "What year did John start surfing?",
        "In which month did they meet?",
    ):
        assert asks_when(q), q
    for q in ("What did Melanie say when she left?", "Who went camping?", "What may happen next?"):
        assert not asks_when(q), q


def test_a_day_named_beside_a_month():
    assert named_day("What painting did Melanie show on October 13, 2023?") == 13
    assert named_day("What did Gina find on 1 February, 2023?") == 1
    assert named_day("What did she do on the 3rd of July?") == 3
    assert named_day("What did she do in July 2023?") is None
    assert named_day("at 10:30 in July") is None
