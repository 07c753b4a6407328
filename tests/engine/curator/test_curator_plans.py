"""Issue #25: confirmations say what will happen. `curator.plan()` / `undo_plan()` build one typed
plan that the dialog renders and the apply then executes (refused if it no longer holds): a rule
merge keeps its survivor's id, a memory merge makes a new memory from its survivor, undo deletes
only what the apply created. Merges whose remaining text drops a negation, a condition, a number or
a name are flagged risky."""

from __future__ import annotations

import pytest

from engine import open_engine
from engine.config import CuratorSettings, Settings
from engine.curator.risky import merge_risks, names_in
from engine.errors import InvalidInput
from tests.direct_sql import direct
from tests.engine.curator_helpers import add_rule

pytestmark = pytest.mark.backends

NIGHTLY = "The staging database is refreshed every night from production"


def _merge(eng, kind="memory") -> int:
    props = [p for p in eng.curator.run(use_model=False).proposals if p.kind == "merge"]
    assert len(props) == 1 and props[0].target_kind == kind
    return props[0].id


def test_rule_merge_plan_names_the_kept_rule_and_the_apply_keeps_it(eng):
    a = add_rule(eng, "Never deploy to production on a Friday afternoon, ever", score=6)
    b = add_rule(eng, "Never deploy to production on a Friday afternoon unless paged", score=8)
    pid = _merge(eng, "rule")
    plan = eng.curator.plan(pid)
    assert (plan.survivor_id, plan.keeps_id, plan.creates) == (b, b, None)
    words = plan.describe()
    assert f"Merge rules #{a}, #{b} into rule #{b} (kept under its own id)" in words
    assert "NEW" not in words and f"#{a}: retired, absorbed_into → #{b}" in words
    p = eng.curator.approve(pid, plan=plan)
    assert p.result_id == b  # the id the dialog named
    assert direct(eng.store).one("SELECT status FROM rules WHERE id = ?", (a,))[0] == "retired"
    undo = eng.curator.undo_plan(pid)
    words = undo.describe()
    assert "delete no memory or rule: the apply created none" in words
    assert f"restore rule #{b}" in words and f"restore rule #{a}" in words
    assert "score" in undo.restores["rules"][b] and "status" in undo.restores["rules"][a]
    assert f"restore rule #{b} as it was before (score" in words
    eng.curator.undo(pid, plan=undo)
    row = direct(eng.store).one("SELECT text, status FROM rules WHERE id = ?", (b,))
    assert tuple(row) == ("Never deploy to production on a Friday afternoon unless paged", "active")
    assert direct(eng.store).one("SELECT status FROM rules WHERE id = ?", (a,))[0] == "active"


def test_memory_merge_plan_names_the_survivor_and_undo_deletes_only_the_new_memory(eng):
    a = eng.add_memory(NIGHTLY, agent="atlas", importance=0.9, dedup=False)
    b = eng.add_memory(NIGHTLY + " snapshot", agent="atlas", dedup=False)
    pid = _merge(eng)
    plan = eng.curator.plan(pid)
    assert (plan.survivor_id, plan.keeps_id, plan.creates) == (a, None, "memory")
    assert f"metadata of #{a} (the survivor)" in plan.describe()
    p = eng.curator.approve(pid, plan=plan)
    new = eng.memories.get(p.result_id)
    assert new.content == NIGHTLY and p.result_id not in (a, b)
    assert eng.memories.get(a).absorbed_into == p.result_id
    undo = eng.curator.undo_plan(pid)
    assert undo.deletes["memories"] == [p.result_id]
    assert f"delete memory #{p.result_id}, which the apply created" in undo.describe()
    assert set(undo.restores["memories"]) == {a, b}
    eng.curator.undo(pid, plan=undo)
    assert eng.memories.get(a).absorbed_into is None and eng.memories.get(a).tier == "active"


def test_a_plan_that_no_longer_holds_is_refused_and_nothing_changes(eng):
    a = eng.add_memory(NIGHTLY, agent="atlas", importance=0.9, dedup=False)
    eng.add_memory(NIGHTLY + " snapshot", agent="atlas", dedup=False)
    pid = _merge(eng)
    edited = eng.curator.plan(pid, "Staging is refreshed nightly")
    assert edited.edited and edited.text == "Staging is refreshed nightly"
    with pytest.raises(InvalidInput, match="changed since its confirmation"):
        eng.curator.approve(pid, plan=edited)  # confirmed the edit, asked without it
    assert eng.curator.get(pid).proposal.status == "pending"
    assert eng.memories.get(a).absorbed_into is None
    p = eng.curator.approve(pid, text="Staging is refreshed nightly", plan=edited)
    assert eng.memories.get(p.result_id).content == "Staging is refreshed nightly"


def test_merge_risks_name_what_the_survivor_drops():
    kept = "Feature flags are removed after launch"
    assert merge_risks([kept + " unless the on-call agrees", kept], kept) == [
        "drops the condition “unless the on-call agrees”"
    ]
    assert merge_risks(["Do not page Lee after 22:00", "Page after hours"], "Page after hours") == [
        "drops the negation “not”",
        "drops the number or date “22:00”",
        "drops the name “Lee”",
    ]
    assert merge_risks(["Don't retry only if the queue is full"], "Retry") == [
        "drops the negation “Don't”",
        "drops the condition “only if the queue is full”",
    ]
    assert merge_risks([kept, kept + "."], kept) == []  # nothing dropped
    assert names_in("Ask Lee. Then PagerDuty pages Sam") == ["Lee", "PagerDuty", "Sam"]
    assert names_in("I think The rule holds") == ["The"]  # not sentence-initial: counted


def test_condition_dropped_at_cosine_082_is_flagged_and_bulk_skips_it(db_path, clock, minilm):
    settings = Settings(curator=CuratorSettings(merge_threshold=0.82))
    with open_engine(db_path, embedder=minilm, clock=clock, actor="t", settings=settings) as eng:
        _condition_dropped(eng)


def _condition_dropped(eng) -> None:
    kept = "Feature flags are removed after launch"
    a = eng.add_memory(kept, agent="atlas", importance=0.9, dedup=False)
    b = eng.add_memory(kept + " unless the on-call agrees", agent="atlas", dedup=False)
    [prop] = [p for p in eng.curator.run().proposals if p.kind == "merge"]
    assert prop.members == [a, b] and 0.82 <= prop.evidence["min_similarity"] < 0.9
    assert prop.evidence["risky"] is True
    assert "unless the on-call agrees" in prop.evidence["risky_reason"]
    plan = eng.curator.plan(prop.id)
    assert plan.risks == ("drops the condition “unless the on-call agrees”",)
    assert "RISKY: drops the condition “unless the on-call agrees”" in plan.describe()
    [out] = eng.curator.approve_many([prop.id])
    assert out.skipped and eng.curator.get(prop.id).proposal.status == "pending"
