"""The audit trail: every mutation recorded, filterable, hash-chained; forget re-chains openly."""

from __future__ import annotations

import pytest

from engine import FixedClock, HashEmbedder, InvalidInput, open_engine
from engine.audit import log as audit
from tests.direct_sql import direct

pytestmark = pytest.mark.backends


def test_filters_by_target_actor_action_and_since(db_path):
    clock = FixedClock("2026-01-01T00:00:00Z")
    a = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="ana")
    m = a.add_memory("The build cache lives on the fast disk", dedup=False)
    clock.advance(86400)
    a.memories.pin(m, reason="important")
    a.close()
    b = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="bo")
    n = b.add_memory("Unrelated note about coffee", dedup=False)
    try:
        assert [e.action for e in b.audit.log(target=f"memory:{m}")] == ["pin", "add"]
        assert [e.action for e in b.audit.log(target=str(n))] == ["add"]
        assert {e.actor for e in b.audit.log(actor="ana")} == {"ana"}
        pins = b.audit.log(action="pin")
        assert len(pins) == 1 and pins[0].reason == "important" and pins[0].summary == {"pinned": [False, 1]}
        assert [e.target_id for e in b.audit.log(since="2026-01-02")] == [str(n), str(m)]
        assert b.audit.log(since="2026-01-03") == []
        with pytest.raises(InvalidInput):
            b.audit.log(since="yesterday-ish")
    finally:
        b.close()


def test_chain_detects_an_edited_row_and_rewrite_rechains(eng):
    for i in range(3):
        eng.add_memory(f"note {i} about the release calendar", dedup=False)
    chk = eng.audit.verify()
    assert chk.ok and chk.rows == 3
    direct(eng.store).execute("UPDATE audit SET reason = 'tampered' WHERE id = 2")
    chk = eng.audit.verify()
    assert not chk.ok and chk.first_bad_id == 2
    direct(eng.store).execute("UPDATE audit SET reason = '' WHERE id = 2")
    assert eng.audit.verify().ok
    eng.store.write(lambda c: audit.rewrite(c, {2: ("", '{"redacted":true}')}))
    assert eng.audit.verify().ok  # re-chained on purpose
    direct(eng.store).execute("DELETE FROM audit WHERE id = 2")
    assert eng.audit.verify().first_bad_id == 3  # a deleted row breaks the link after it


def test_every_curator_and_forget_step_is_audited(eng):
    a = eng.add_memory("Rotate the staging keys every month", dedup=False)
    eng.add_memory("Rotate the staging keys every month!", dedup=False)
    run = eng.curator.run()
    pid = run.proposals[0].id
    eng.curator.approve(pid)
    eng.curator.undo(pid)
    eng.forget.run("memory", [a], "request 12")
    actions = [e.action for e in eng.audit.log(limit=100)][::-1]
    for expected in (
        "proposal-created",
        "curate-run",
        "proposal-approved",
        "proposal-applied",
        "proposal-undone",
        "forget-request",
        "forget-preview",
        "forget",
        "forget-verify",
    ):
        assert expected in actions
    assert eng.audit.log(target=f"curator_run:{run.id}")[0].action == "curate-run"
    # the add row's preview quoted the forgotten memory: scrubbed, chain still whole
    add_row = eng.audit.log(target=f"memory:{a}", action="add")[0]
    assert "Rotate" not in str(add_row.summary) and "[forgotten]" in str(add_row.summary)
    assert eng.audit.verify().ok


def test_verify_reports_a_forget_case_whose_audit_head_was_cut(eng):
    from engine.audit.anchor import anchors_dir, database_id

    eng.add_memory("The vault code is Quokka-7731-Tango", dedup=False)
    res = eng.forget.run("query", "Quokka-7731-Tango", "asked to forget")
    assert eng.audit.verify().ok
    head = eng.forget.get(res.request_id).counts["audit_head"]
    with eng.store.reading() as c:
        (anchors_dir() / f"{database_id(c)}.json").unlink()  # no head anchor to catch the cut
    direct(eng.store).execute("DELETE FROM audit WHERE id >= ?", (head[0],))
    chk = eng.audit.verify()
    assert not chk.ok
    assert any(f"forget case {res.request_id}" in p and "gone" in p for p in chk.problems)
