"""Forget cases an operator can finish (issue #25) and the two-person rule (issue #27): precise
query scopes (word / phrase / substring), narrowing a case, withdrawing it, its deadline, the
levels a verification records, and a second operator's approval. Both backends."""

from __future__ import annotations

import dataclasses

import pytest

from engine import InvalidInput, NotFound
from engine.clock import DAY
from engine.errors import Refused
from engine.forget.match import Matcher, context
from engine.forget.workflow import approved_by, due
from engine.identity import Identity

pytestmark = pytest.mark.backends

SAMPLE_RULE = "Flag sample sizes under 30"


def _sam(eng) -> dict:
    ids = {
        "holds": eng.add_memory("Sam holds ES futures; typical size is 2 to 3 contracts", dedup=False),
        "possessive": eng.add_memory("SAM's largest drawdowns happen on CPI release mornings", dedup=False),
        "samuel": eng.add_memory("Samuel from finance approves the budget", dedup=False),
        "other": eng.add_memory("The build takes four minutes on the CI runners", dedup=False),
    }
    ids["rule"] = eng.rules.add(SAMPLE_RULE, score=9.0, pinned=True).id
    return ids


def test_matcher_whole_words_phrase_and_substring():
    word = Matcher("Sam")
    assert word.matches("Sam holds ES") and word.matches("SAM's notes") and word.matches("ＳＡＭ here")
    assert not word.matches(SAMPLE_RULE) and not word.matches("Samuel") and not word.matches("sam_id")
    assert Matcher("Sam", "substring").matches(SAMPLE_RULE)
    # word mode: every word, any order; phrase: in order, adjacent (punctuation between is fine)
    assert Matcher("requests pull").matches("Keep pull requests small")
    assert not Matcher("requests pull", "phrase").matches("Keep pull requests small")
    assert Matcher("pull requests", "phrase").matches("keep PULL-requests small")
    assert Matcher("Zoë Müller").matches("ticket from ZOË MÜLLER")
    text = "x " * 120 + "then Sam said no"
    shown, marks = context(text, Matcher("Sam").spans(text), 60)
    assert len(shown) <= 60 and [shown[a:b] for a, b in marks] == ["Sam"]
    with pytest.raises(InvalidInput):
        Matcher("Sam", "fuzzy")
    with pytest.raises(InvalidInput):
        Matcher("!!!")


def test_query_scope_matches_whole_words_by_default(eng):
    ids = _sam(eng)
    pv = eng.forget.run("query", "Sam", "user asked", preview=True)
    got = {(i.kind, int(i.id)) for i in pv.items}
    assert got == {("memory", ids["holds"]), ("memory", ids["possessive"])}  # not the rule, not Samuel
    assert pv.counts["memories"] == 2 and pv.counts["rules"] == 0
    for it in pv.items:  # the matched word is marked where it stands in the shown text
        assert [it.preview[a:b].lower() for a, b in it.marks] == ["sam"] and it.excludable
    assert pv.request.workflow["match"] == "word"
    res = eng.forget.execute(pv.request.id)
    # SQLite: verified; PostgreSQL: logically clean (the test server's WAL keeps bytes until recycled)
    assert res.counts["levels"].get("logical", res.counts["levels"].get("files")) == "clean"
    assert eng.rules.get(ids["rule"]).text == SAMPLE_RULE  # the critical rule is still there
    assert eng.memories.get(ids["samuel"]) is not None

    # substring mode is explicit, and is another case
    pv = eng.forget.run("query", "Sam", "user asked", preview=True, match="substring")
    assert ("rule", str(ids["rule"])) in {(i.kind, i.id) for i in pv.items}
    assert pv.request.workflow["match"] == "substring"


def test_exclude_narrows_the_case_and_execute_keeps_what_was_dropped(eng):
    ids = _sam(eng)
    req = eng.forget.open("query", "Sam", "user asked")
    eng.forget.preview(req.id)
    pv = eng.forget.exclude(req.id, [("memory", ids["possessive"])])
    assert {int(i.id) for i in pv.items} == {ids["holds"]} and pv.excluded == {
        "memory": [str(ids["possessive"])]
    }
    assert eng.forget.get(req.id).selected["memories"] == [ids["holds"]]
    back = eng.forget.exclude(req.id, [("memory", ids["possessive"])], keep=True)
    assert {int(i.id) for i in back.items} == {ids["holds"], ids["possessive"]}
    eng.forget.exclude(req.id, [("memory", ids["possessive"])])
    eng.forget.execute(req.id)
    assert eng.memories.get(ids["possessive"]) is not None
    with pytest.raises(NotFound):
        eng.memories.get(ids["holds"])
    actions = [e.action for e in eng.audit.log(target=f"forget_request:{req.id}", limit=50)]
    assert actions.count("forget-exclude") == 2 and "forget-include" in actions
    with pytest.raises(InvalidInput):
        eng.forget.exclude(req.id, [("memory", ids["other"])])  # executed: the scope is closed
    with pytest.raises(InvalidInput):
        eng.forget.exclude(eng.forget.open("query", "Sam", "x").id, [("proposal", 1)])


def test_withdraw_leaves_the_open_count_keeps_the_audit_and_no_text(eng):
    _sam(eng)
    req = eng.forget.open("query", "Sam holds", "user asked about Sam holds")
    eng.forget.preview(req.id)
    before = eng.counts().open_forget_requests
    with pytest.raises(InvalidInput):
        eng.forget.withdraw(req.id, " ")
    r = eng.forget.withdraw(req.id, "wrong person")
    assert r.status == "withdrawn" and eng.counts().open_forget_requests == before - 1
    assert r.scope_value.startswith("hmac:") and "Sam holds" not in r.reason and r.selected == {}
    assert r.workflow["withdrawn"]["reason"] == "wrong person" and r.workflow["withdrawn"]["by"] == "tester"
    actions = [e.action for e in eng.audit.log(target=f"forget_request:{req.id}", limit=50)]
    assert {"forget-request", "forget-preview", "forget-withdraw"} <= set(actions)
    for call in (lambda: eng.forget.execute(req.id), lambda: eng.forget.preview(req.id)):
        with pytest.raises(InvalidInput):
            call()


def test_deadline_days_left_and_overdue(eng):
    eng.settings = dataclasses.replace(
        eng.settings, forget=dataclasses.replace(eng.settings.forget, deadline_days=10)
    )
    mid = eng.add_memory("Sam holds ES futures", dedup=False)
    req = eng.forget.open("memory", [mid], "user asked")
    assert req.deadline == pytest.approx(eng.clock.now() + 10 * DAY)
    d = due(req, eng.clock.now())
    assert (d.text, d.overdue, d.days_left) == ("10 days left", False, 10)
    eng.clock.advance(12 * DAY)
    d = due(eng.forget.get(req.id), eng.clock.now())
    assert (d.text, d.overdue) == ("overdue 2 days", True)


def test_a_fresh_forget_records_every_level_and_what_it_checked(eng):
    mid = eng.add_memory("The locker code is Quokka-4417-Lantern", dedup=False)
    res = eng.forget.run("memory", [mid], "user asked")
    lines, notes = res.counts["levels"], res.counts["level_notes"]
    assert set(lines) == set(notes) and "out of reach" in lines
    assert all(lines[n] == "clean" or lines[n].startswith(("not checked", "residue")) for n in lines)
    assert all(notes[n] for n in notes)  # what each level checked, or why not
    assert lines.get("logical", lines.get("files")) == "clean"
    assert (res.status == "verified") == all(not x.startswith("residue") for x in lines.values())


def _officer(name: str) -> Identity:
    """A logged-in operator holding the forget officer role (as `memconsole serve` starts one)."""
    return Identity(name, "operator", grants=frozenset({"forget"}))


def test_two_person_rule(eng):
    eng.settings = dataclasses.replace(
        eng.settings, forget=dataclasses.replace(eng.settings.forget, approvals=2)
    )
    ids = _sam(eng)
    alice, bob = _officer("alice"), _officer("bob")
    with eng.acting_as(alice):
        req = eng.forget.open("query", "Sam", "user asked")
        with pytest.raises(Refused, match="second operator"):
            eng.forget.execute(req.id)  # not even previewed
        eng.forget.preview(req.id)
        with pytest.raises(Refused, match="second operator"):
            eng.forget.approve(req.id)  # the requester cannot approve
        with pytest.raises(Refused, match="approval by a second operator"):
            eng.forget.execute(req.id)
    with eng.acting_as(bob):
        eng.forget.approve(req.id)
        with pytest.raises(InvalidInput, match="already approved"):
            eng.forget.approve(req.id)
    assert approved_by(eng.forget.get(req.id)) == ["bob"]
    with eng.acting_as(alice):  # narrowing changes the scope: bob's approval no longer holds
        eng.forget.exclude(req.id, [("memory", ids["possessive"])])
        assert approved_by(eng.forget.get(req.id)) == []
        with pytest.raises(Refused):
            eng.forget.execute(req.id)
    # A label never makes alice a second operator.
    with eng.acting_as(alice.labelled("bob")), pytest.raises(Refused, match="second operator"):
        eng.forget.approve(req.id)
    with eng.acting_as(bob.labelled("ops-lead")):
        eng.forget.approve(req.id)
    with eng.acting_as(alice):
        assert eng.forget.execute(req.id).status in ("executed", "verified")
    r = eng.forget.get(req.id)
    assert (r.requested_by, approved_by(r), r.workflow["executed_by"]["by"]) == (
        "alice",
        ["bob (as ops-lead)"],
        "alice",
    )
    assert eng.memories.get(ids["possessive"]) is not None
    assert [e.actor for e in eng.audit.log(action="forget-approve", limit=10)] == ["bob (as ops-lead)", "bob"]


@pytest.mark.sqlite_only("locates residue in the SQLite file's pages (dbstat)")
def test_residue_is_located_and_can_be_accepted_with_a_reason(eng):
    """An operator drops a rule from a query case: the rule keeps the query's text, so the bytes
    remain. The residue is located (file, offset, page, table) and named as shared with that live
    rule; accepting it is audited and the case stays `executed`, never `verified`."""
    eng.add_memory("The locker code is Quokka-4417-Lantern for the east door", dedup=False)
    rule = eng.rules.add("Never share Quokka-4417-Lantern with contractors").id
    req = eng.forget.open("query", "Quokka-4417-Lantern", "asked")
    eng.forget.preview(req.id)
    eng.forget.exclude(req.id, [("rule", rule)])
    res = eng.forget.execute(req.id)
    assert res.status == "executed" and res.residue
    at = res.counts["residue_at"]
    assert at and at[0]["file"].endswith(".db") and at[0]["page"] > 0 and at[0]["length"] >= 12
    assert any(
        h.get("table") == "rules" and h["shared_with"] == f"piece shared with live rule #{rule}" for h in at
    )
    with pytest.raises(InvalidInput):
        eng.forget.accept_residue(req.id, "")
    r = eng.forget.accept_residue(req.id, "the rule stays: legal hold")
    assert r.status == "executed" and r.workflow["residue_accepted"]["reason"] == "the rule stays: legal hold"
    assert [e.reason for e in eng.audit.log(action="forget-accept-residue", limit=5)] == [
        "the rule stays: legal hold"
    ]
