"""The one filter language (issue #27): typed parse per surface, one clear line for every bad
token (naming it and its column), partial parsing while typing, times, completion."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime

import pytest

from engine.errors import InvalidInput
from engine.filter_language import MAX_CHARS, FilterError, candidates, complete, parse_filter

NOW = datetime(2026, 3, 15, tzinfo=UTC).timestamp()


def ts(*a: int) -> float:
    return datetime(*a, tzinfo=UTC).timestamp()


def test_the_issue_example_parses_into_a_typed_filter_per_surface():
    f = parse_filter('agent:atlas tier:archived kind:semantic deploy "two words"', "search")
    assert (f.agent, f.tier, f.kind, f.query) == ("atlas", "archived", "semantic", "deploy two words")
    assert f.kwargs() == {"agent": "atlas", "tier": "archived", "kind": "semantic"}  # words: the query
    s = parse_filter("agent:atlas since:2026-01 user:dana migrate", "sessions")
    assert s.kwargs() == {"agent": "atlas", "since": ts(2026, 1, 1), "user": "dana", "text": "migrate"}
    r = parse_filter("status:active,dormant pinned:yes domain:deploy lockfiles", "rules")
    assert r.kwargs() == {
        "status": ["active", "dormant"],
        "pinned": True,
        "domain": "deploy",
        "query": "lockfiles",
    }
    c = parse_filter("status:pending kind:merge agent:atlas until:2026-01 deploy", "curator")
    assert c.kwargs()["until"] == ts(2026, 2, 1) and c.kwargs()["text"] == "deploy"
    a = parse_filter("actor:dana action:forg* target:memory:12 canary", "audit")
    assert a.kwargs() == {"actor": "dana", "action": "forg*", "target": "memory:12", "text": "canary"}
    assert parse_filter('agent:"night shift" x', "sessions").agent == "night shift"
    assert parse_filter(r'"say \"hi\""', "sessions").query == 'say "hi"'


def test_times_iso_year_month_and_ages():
    assert parse_filter("since:2026", "audit").since == ts(2026, 1, 1)
    assert parse_filter("until:2026", "audit").until == ts(2027, 1, 1)
    assert parse_filter("until:2026-02", "audit").until == ts(2026, 3, 1)
    assert parse_filter("since:2026-01-05T09:00Z", "audit").since == ts(2026, 1, 5, 9)
    assert parse_filter("since:7d", "audit", now=NOW).since == NOW - 7 * 86400
    assert parse_filter("since:24h", "audit", now=NOW).since == NOW - 86400
    with pytest.raises(FilterError, match=r"since:2026-13 is not a time.*\(column 1\)"):
        parse_filter("since:2026-13", "audit")
    with pytest.raises(FilterError, match="needs the engine's clock"):
        parse_filter("since:7d", "audit")


@pytest.mark.parametrize(
    ("text", "surface", "says"),
    [
        ("acter:dana", "audit", "unknown key 'acter' for the audit log; did you mean actor:?"),
        ("x since:2026", "search", r"since: does not apply to search; keys here: agent, user.*column 3"),
        ("tier:frozen", "search", "tier:frozen is not one of core, active, archived, all"),
        ("status:nope", "curator", "status:nope is not one of"),
        ("kind:semantic", "curator", "kind:semantic is not one of"),  # a memory kind is no proposal kind
        ("agent:", "sessions", "agent: needs a value, e.g. agent:NAME"),
        ("agent:a agent:b", "sessions", r"agent: given twice.*column 9"),
        ('deploy "open', "sessions", r"a quote is not closed \(column 8\)"),
        ("deploy \x1b[31mred", "sessions", r"control character U\+001B is not allowed \(column 8\)"),
        ("a\u202eb", "audit", r"U\+202E"),
        ("x\x00", "rules", r"U\+0000"),
        ("pinned:maybe", "rules", "pinned:maybe is not one of yes, no"),
    ],
)
def test_hostile_or_wrong_tokens_are_one_clear_line(text, surface, says):
    with pytest.raises(FilterError, match=says) as exc:
        parse_filter(text, surface)
    msg = str(exc.value)
    assert isinstance(exc.value, InvalidInput) and "\n" not in msg and "\x1b" not in msg and len(msg) < 400
    assert msg.startswith("filter: ")


def test_huge_input_is_refused_without_echoing_it():
    with pytest.raises(FilterError, match=f"at most {MAX_CHARS:,} characters, this one has 3,000,000") as exc:
        parse_filter("agent:" + "a" * 2_999_994, "sessions")
    assert len(str(exc.value)) < 100
    long_key = "k" * 1500 + ":v"
    with pytest.raises(FilterError) as exc:
        parse_filter(long_key, "audit")
    assert len(str(exc.value)) < 400  # the key is cut in the message


def test_search_reads_prose_colons_as_words_but_not_near_misses():
    f = parse_filter("note: deploy on fridays", "search")
    assert f.query == "note: deploy on fridays" and f.notes and "searched as a word" in f.notes[0]
    with pytest.raises(FilterError, match="did you mean agent:"):
        parse_filter("agnet:atlas", "search")
    with pytest.raises(FilterError, match="unknown key 'note'"):  # elsewhere: an error, quote it
        parse_filter("note: x", "sessions")
    assert parse_filter('"note:" x', "sessions").query == "note: x"


def test_partial_parsing_leaves_out_only_the_token_being_typed():
    assert parse_filter("agent:atlas since:2026-0", "sessions", partial=True).kwargs() == {"agent": "atlas"}
    assert parse_filter("agent:atlas tier:", "search", partial=True).kwargs() == {"agent": "atlas"}
    assert parse_filter('x "open', "sessions", partial=True).query == "x open"
    with pytest.raises(FilterError):  # a bad token before the one being typed still fails
        parse_filter("since:nope agent:at", "sessions", partial=True)
    with pytest.raises(FilterError):  # a space after it: it is done, so it is checked
        parse_filter("since:2026-0 ", "sessions", partial=True)


def test_completion_of_keys_closed_values_and_known_values():
    assert candidates("deploy ag", "search") == ["agent:"]
    assert complete("deploy ag", "search") == "deploy agent:"
    assert candidates("tier:a", "search") == ["tier:active", "tier:archived", "tier:all"]
    assert complete("tier:core,ar", "search") == "tier:core,archived"
    assert complete("status:pen", "curator") == "status:pending"
    known = {"agent": ["atlas", "night shift"]}
    assert candidates("agent:", "sessions", known) == ["agent:atlas", 'agent:"night shift"']
    assert complete("agent:n", "sessions", known) == 'agent:"night shift"'
    assert parse_filter(complete("agent:n", "sessions", known) or "", "sessions").agent == "night shift"
    assert candidates("deploy ", "search") == [] and complete('"ag', "search") is None
    assert candidates("zz", "audit") == [] and candidates("bogus:x", "audit") == []


def test_the_language_imports_no_ui():
    code = "import sys, engine.filter_language; assert 'textual' not in sys.modules and 'rich' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
