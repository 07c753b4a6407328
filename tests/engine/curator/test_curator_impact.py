"""Issue #26 "impact before approval": which searches' top k a pending proposal would change,
computed on a dry run (nothing stays: rows, vectors, audit), and equal to what applying then shows."""

from __future__ import annotations

import pytest

from engine.curator.impact import NEW_RECORD, ImpactQuery
from engine.errors import InvalidInput
from tests.engine.curator_helpers import dump

pytestmark = pytest.mark.backends

NIGHTLY = "The staging database is refreshed every night from production"
FILLERS = [
    "Lunch orders go to the shared spreadsheet every Friday morning",
    "The payments service owns the refund queue and its dead letters",
    "Production snapshots are kept for fourteen days in cold storage",
    "Staging credentials rotate on the first Monday of each month",
]


def _setup(eng):
    a = eng.add_memory(NIGHTLY, agent="atlas", importance=0.9, dedup=False)
    b = eng.add_memory(NIGHTLY + " snapshot", agent="atlas", dedup=False)
    others = [eng.add_memory(t, agent="atlas", dedup=False) for t in FILLERS]
    [pid] = [p.id for p in eng.curator.run().proposals if p.kind == "merge"]
    return a, b, others, pid


QUERIES = [
    ImpactQuery("check #1", "production snapshot", {}, 2),
    ImpactQuery("recall #7", "staging database refreshed", {"agent": "atlas"}, 3),
    ImpactQuery("query", "lunch spreadsheet", {}, 2),
]


def test_impact_lists_changed_top_k_on_a_dry_run_and_equals_what_applying_shows(eng):
    a, b, others, pid = _setup(eng)
    before_dump = dump(eng)
    audit_before = len(eng.audit.log(limit=10_000))
    rows = eng.curator.impact(pid, QUERIES, members=False)
    assert dump(eng) == before_dump  # nothing of the preview stays
    assert len(eng.audit.log(limit=10_000)) == audit_before
    by = {r.label: r for r in rows}
    snap = by["check #1"]
    assert b in snap.before and snap.changed and b in snap.left  # the merge removes it
    assert NEW_RECORD in by["recall #7"].after and {a, b} & set(by["recall #7"].left)
    assert not by["query"].changed and by["query"].entered == by["query"].left == []
    # apply for real: each query's top k is what the preview said
    p = eng.curator.approve(pid)
    for q, r in zip(QUERIES, rows, strict=True):
        hits = eng.search(q.query, k=q.k, record_access=False, **q.filters).hits
        assert [NEW_RECORD if h.id == p.result_id else h.id for h in hits] == r.after, q.label


def test_impact_of_member_queries_and_refusals(eng):
    a, b, others, pid = _setup(eng)
    rows = eng.curator.impact(pid)
    assert [r.label for r in rows] == [f"member #{a}", f"member #{b}"]
    assert all(r.k == 10 for r in rows)
    with pytest.raises(InvalidInput, match="unknown filter"):
        eng.curator.impact(pid, [ImpactQuery("x", "staging", {"colour": "red"})], members=False)
    eng.curator.reject(pid, "not now")
    with pytest.raises(InvalidInput, match="impact is shown before approval"):
        eng.curator.impact(pid)


def test_impact_reruns_the_agents_logged_recalls_and_pinned_checks(eng):
    """Without naming any query: a logged agent recall that returned a member, and a pinned check on
    a member, are re-run on the dry run; a logged recall that never saw a member is not."""
    a, b, others, pid = _setup(eng)
    eng.search("production snapshot", k=2, record_access=True)  # an agent's recall: logged
    eng.search("lunch spreadsheet", k=1, record_access=True)  # saw no member: not re-run
    [logged] = [r for r in eng.recalls.list() if r.query == "production snapshot"]
    check = eng.checks.add("staging database refreshed", b, k=3)
    rows = {r.label: r for r in eng.curator.impact(pid, members=False)}
    assert set(rows) == {f"recall #{logged.id}", f"check #{check.id} (memory {b})"}
    assert rows[f"recall #{logged.id}"].changed and b in rows[f"recall #{logged.id}"].before
    assert b in rows[f"check #{check.id} (memory {b})"].left  # the merge takes the pinned memory out
