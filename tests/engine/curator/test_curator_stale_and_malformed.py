"""Issue #12 "Trust": the curator's approval applies only what was proposed (a member changed in
any way since is refused as stale, for every kind — use alone excepted for merges and promotes,
issue #25), and malformed rows never make the curator or
the queue fail."""

from __future__ import annotations

import json

import pytest

from engine import InvalidInput
from tests.direct_sql import direct
from tests.engine.curator_helpers import OTHER, TWIN_A, TWIN_B, add_rule, age

pytestmark = pytest.mark.backends


def _raw(eng, sql, params=()):
    eng.store.write(lambda c: direct(c).execute(sql, params))


@pytest.fixture
def merge(eng):
    a = eng.add_memory(TWIN_A, agent="atlas", importance=0.9, dedup=False)
    b = eng.add_memory(TWIN_B, agent="atlas", dedup=False)
    eng.add_memory(OTHER, agent="atlas", dedup=False)
    p = [p for p in eng.curator.run().proposals if p.kind == "merge"][0]
    assert p.members == [a, b]
    return p.id, a, b


def _refused(eng, pid, match="stale"):
    with pytest.raises(InvalidInput, match=match) as e:
        eng.curator.approve(pid)
    assert "\n" not in str(e.value)
    assert eng.curator.get(pid).proposal.status == "pending"  # nothing applied
    return str(e.value)


CHANGES = {
    "content edited": lambda eng, m: eng.memories.edit(m, TWIN_A + " (moved to ops/prod)"),
    "forgotten": lambda eng, m: _raw(eng, "DELETE FROM memories WHERE id = ?", (m,)),
    "archived": lambda eng, m: eng.memories.archive(m),
    "archived then restored": lambda eng, m: (eng.memories.archive(m), eng.memories.set_tier(m, "active")),
    "reinforced": lambda eng, m: eng.memories.reinforce(m),
    "accessed": lambda eng, m: _raw(
        eng, "UPDATE memories SET access_count = access_count + 1 WHERE id = ?", (m,)
    ),
    "absorbed elsewhere": lambda eng, m: _raw(
        eng, "UPDATE memories SET absorbed_into = 1 WHERE id = ?", (m,)
    ),
    "pinned": lambda eng, m: eng.memories.pin(m),
    "importance": lambda eng, m: eng.memories.set_importance(m, 0.1),
    "content edited by raw SQL": lambda eng, m: _raw(
        eng, "UPDATE memories SET content = 'other' WHERE id = ?", (m,)
    ),
}


@pytest.mark.parametrize("change", [c for c in CHANGES if c != "accessed"])
def test_merge_with_a_changed_member_is_refused_as_stale(eng, clock, merge, change):
    pid, a, b = merge
    clock.advance(60)
    CHANGES[change](eng, b)
    _refused(eng, pid)


def test_merge_edit_names_what_changed(eng, clock, merge):
    pid, a, b = merge
    eng.memories.edit(a, TWIN_A + " and the backup key too")
    assert "content was edited" in _refused(eng, pid) or "'edit'" in _refused(eng, pid)


def test_unchanged_proposal_still_applies_after_decay_and_time(eng, clock, merge):
    pid, a, b = merge
    clock.advance(3 * 86400)
    eng.decay.run(refresh_snapshots=True)  # strength/updated_at move with time alone
    assert eng.curator.approve(pid).status == "applied"


@pytest.mark.parametrize(
    "change", ["content edited", "reinforced", "archived then restored", "pinned", "forgotten"]
)
def test_archive_and_promote_with_a_changed_member_are_refused(eng, clock, change):
    m = eng.add_memory("A note that looked abandoned", dedup=False)
    age(eng, m, 45)
    learned = eng.add_memory(
        "Always run the migrations before the smoke tests", category="learning", dedup=False
    )
    for _ in range(3):
        eng.memories.reinforce(learned)
    props = {p.kind: p for p in eng.curator.run().proposals if p.kind in ("archive", "promote")}
    assert props["archive"].members == [m] and props["promote"].members == [learned]
    clock.advance(60)
    CHANGES[change](eng, m)
    CHANGES[change](eng, learned)
    _refused(eng, props["archive"].id)
    _refused(eng, props["promote"].id)


RULE_CHANGES = {
    "text edited": lambda eng, r, a: _raw(
        eng, "UPDATE rules SET text = text || ' (edited)' WHERE id = ?", (r,)
    ),
    "pinned": lambda eng, r, a: eng.rules.pin(r),
    "reinforced": lambda eng, r, a: eng.rules.reinforce(r),
    "absorbed": lambda eng, r, a: _raw(eng, "UPDATE rules SET absorbed_into = ? WHERE id = ?", (a, r)),
    "deleted": lambda eng, r, a: _raw(eng, "DELETE FROM rules WHERE id = ?", (r,)),
    "retired then revived": lambda eng, r, a: (eng.rules.retire(r), eng.rules.revive(r, score=3.5)),
}


@pytest.mark.parametrize(
    "change", ["text edited", "pinned", "reinforced", "absorbed", "deleted", "retired then revived"]
)
def test_rule_merge_and_retire_with_a_changed_member_are_refused(eng, clock, change):
    a = add_rule(eng, "Never deploy to production on a Friday afternoon, ever", score=7)
    b = add_rule(eng, "Never deploy to production on a Friday afternoon unless paged", score=6)
    old = add_rule(
        eng,
        "Prefer tabs over spaces in the legacy repo",
        score=3.5,
        status="dormant",
        last=clock.now() - 90 * 86400,
    )
    props = {p.kind: p for p in eng.curator.run(use_model=False).proposals if p.target_kind == "rule"}
    assert props["merge"].members == [a, b] and props["retire"].members == [old]
    clock.advance(60)
    for r in (b, old):
        RULE_CHANGES[change](eng, r, a)
    _refused(eng, props["merge"].id)
    _refused(eng, props["retire"].id)


def test_member_state_keeps_no_text(eng, merge):
    pid, a, b = merge
    import json

    ev = json.dumps(eng.curator.get(pid).proposal.evidence)
    assert "staging" not in ev and "vault" not in ev


# -- malformed rows ----------------------------------------------------------------------------------
def _plant_malformed(eng, clock):
    good_a = eng.add_memory(TWIN_A, agent="atlas", dedup=False)
    good_b = eng.add_memory(TWIN_B, agent="atlas", dedup=False)
    bad = [
        eng.add_memory(f"malformed row number {i} about the release train", category="learning", dedup=False)
        for i in range(4)
    ]
    _raw(eng, "UPDATE memories SET metadata = '{not json' WHERE id = ?", (bad[0],))
    _raw(eng, "UPDATE memories SET importance = 9e999, strength = -9e999 WHERE id = ?", (bad[1],))
    _raw(
        eng,
        "UPDATE memories SET access_count = 99, last_reinforced_at = 9e999,"
        " last_accessed_at = -9e999 WHERE id = ?",
        (bad[2],),
    )
    _raw(eng, "UPDATE memories SET metadata = '[1,2]', created_at = 9e999 WHERE id = ?", (bad[3],))
    age(eng, bad[2], 45)
    add_rule(eng, "Never deploy to production on a Friday afternoon, ever", score=7)
    r2 = add_rule(eng, "Never deploy to production on a Friday afternoon unless paged", score=6)
    r3 = add_rule(
        eng, "A rule whose score went bad", score=4, status="dormant", last=clock.now() - 90 * 86400
    )
    r4 = add_rule(eng, "A rule with odd values", score=4, status="dormant", last=clock.now() - 90 * 86400)
    _raw(eng, "UPDATE rules SET metadata = 'nope', score = 9e999 WHERE id = ?", (r2,))
    _raw(eng, "UPDATE rules SET score = 'high' WHERE id = ?", (r3,))
    _raw(eng, "UPDATE rules SET last_reinforced_at = 'soon' WHERE id = ?", (r3,))
    _raw(eng, "UPDATE rules SET status = 'weird', domain = X'00ff', agent = 7 WHERE id = ?", (r4,))
    return good_a, good_b


@pytest.mark.sqlite_only(
    "plants values only SQLite's dynamic typing stores (9e999, text in number columns); PostgreSQL's typed columns refuse them"
)
def test_malformed_rows_never_make_the_curator_or_the_queue_fail(eng, clock):
    good_a, good_b = _plant_malformed(eng, clock)
    dry = eng.curator.run(dry_run=True)
    run = eng.curator.run()
    assert run.id is not None and dry.dry_run
    assert run.counts["malformed"] >= 2 and any("rule" in n for n in run.counts["malformed_rows"])
    assert any(p.kind == "merge" and p.members == [good_a, good_b] for p in run.proposals)
    for p in eng.curator.list():
        d = eng.curator.get(p.id)
        assert d.proposal.id == p.id
    eng.curator.latest_run()
    for p in eng.curator.list(status="pending"):
        try:
            eng.curator.approve(p.id)
        except InvalidInput as exc:  # refused with one line is fine; a crash is not
            assert "\n" not in str(exc)


def test_malformed_proposal_row_is_handled(eng, clock, merge):
    pid, a, b = merge
    _raw(eng, "UPDATE proposals SET members = 'not json', evidence = '{bad' WHERE id = ?", (pid,))
    ps = eng.curator.list()
    assert [p.id for p in ps] == [pid] and ps[0].members == []
    eng.curator.get(pid)
    with pytest.raises(InvalidInput):
        eng.curator.approve(pid)
    eng.curator.run()


@pytest.mark.sqlite_only(
    "plants values only SQLite's dynamic typing stores (9e999, text in number columns); PostgreSQL's typed columns refuse them"
)
def test_cli_curate_run_and_proposal_verbs_survive_malformed_rows(eng, clock, tmp_path, capsys, monkeypatch):
    from console.cli import main

    _plant_malformed(eng, clock)
    db = str(eng.path)
    eng.close()
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    assert main(["--db", db, "curate", "run", "--no-model"]) == 0
    out, err = capsys.readouterr()
    assert "malformed row(s)" in out and "Traceback" not in err
    assert main(["--db", db, "proposals", "--json"]) == 0
    ids = [p["id"] for p in json.loads(capsys.readouterr().out)]
    assert ids
    for pid in ids:
        assert main(["--db", db, "proposal", "show", str(pid), "--json"]) == 0
        json.loads(capsys.readouterr().out)
        code = main(["--db", db, "proposal", "approve", str(pid)])
        out, err = capsys.readouterr()
        assert code in (0, 2) and "internal error" not in err and err.count("\n") <= 1, err


def test_access_does_not_spoil_a_merge_or_a_promote_but_voids_an_archive(eng, clock):
    """Issue #25: an operator's plain search (which records access) before approving, or agents
    recalling popular memories, must not make a merge or a promote stale; the survivor takes the
    members' access counts. An archive is about idleness: use since the proposal voids it."""
    a = eng.add_memory(TWIN_A, agent="atlas", importance=0.9, dedup=False)
    b = eng.add_memory(TWIN_B, agent="atlas", dedup=False)
    eng.add_memory(OTHER, agent="atlas", dedup=False)
    idle = eng.add_memory("A note about the abandoned gazebo blueprint", dedup=False)
    age(eng, idle, 45)
    learned = eng.add_memory(
        "Always run the migrations before the smoke tests", category="learning", dedup=False
    )
    for _ in range(3):
        eng.memories.reinforce(learned)
    props = {p.kind: p for p in eng.curator.run().proposals}
    assert props["merge"].members == [a, b] and props["archive"].members == [idle]
    assert props["promote"].members == [learned]
    clock.advance(60)
    for query in ("staging deploy key vault ops", "abandoned gazebo blueprint", "migrations smoke tests"):
        eng.search(query, k=10)  # records access (and an audit row) for what it returns
    used = {m: eng.memories.get(m).access_count for m in (a, b, idle, learned)}
    assert all(n >= 1 for n in used.values()), used
    _raw(eng, "UPDATE memories SET access_count = access_count + 5 WHERE id = ?", (b,))  # agents
    merged = eng.curator.approve(props["merge"].id)
    assert merged.status == "applied"
    survivor = eng.memories.get(merged.result_id)
    assert survivor.access_count == used[a] + used[b] + 5
    assert eng.curator.approve(props["promote"].id).status == "applied"
    _refused(eng, props["archive"].id)  # stale: used since it was proposed


def test_stale_ones_are_named_before_acting_and_rejected_together(eng, clock, merge):
    """Issue #25: `curator.stale()` names what approval would refuse (reads only), a bulk approve
    refuses those without trying them, `reject_stale` rejects them with a reason."""
    pid, a, b = merge
    assert eng.curator.stale() == {}
    clock.advance(60)
    eng.memories.edit(b, TWIN_A + " (moved to ops/prod)")
    why = eng.curator.stale()
    assert list(why) == [pid] and "stale" in why[pid] and "\n" not in why[pid]
    assert eng.curator.get(pid).proposal.status == "pending"  # looking changed nothing
    [out] = eng.curator.approve_many([pid], reason="bulk")
    assert not out.ok and out.stale and out.status == "pending"
    with pytest.raises(InvalidInput, match="reason"):
        eng.curator.reject_stale(" ")
    [out] = eng.curator.reject_stale("members changed", kind="merge")
    assert out.ok and eng.curator.get(pid).proposal.status == "rejected"
    assert eng.curator.reject_stale("again") == []
