"""A recall records access cheaply (both backends): its k hits in one statement and ONE audit row
for the recall (the query's keyed fingerprint, the agent, the ids; never the query's text), with the
same strengths, access counts and times the per-hit path gave, so decay and the curator see what
they saw before."""

from __future__ import annotations

import json

import pytest

from engine.memories import query_fingerprint
from tests.direct_sql import direct

pytestmark = pytest.mark.backends


def _audit_rows(eng) -> list:
    return direct(eng.store).all("SELECT action, target_kind, target_id, summary FROM audit ORDER BY id")


def test_a_recall_of_k_hits_writes_one_audit_row_and_reinforces_each_hit(eng):
    ids = [eng.add_memory(f"zebra note number {i}", agent="scout", dedup=False) for i in range(6)]
    eng.clock.advance(3 * 86400)  # the hits have decayed a little: reinforcement lifts them
    now = eng.clock.now()
    boost = eng.settings.decay.reinforce_boost
    want = {}
    for mid in ids:
        row = eng.store.query(lambda c, m=mid: c.memories.row(m))
        before = eng.memories.current_strength(row, now)
        want[mid] = min(1.0, before + boost)
    audit_before = len(_audit_rows(eng))

    hits = eng.search("zebra note", k=5, mode="keyword", agent="scout").hits
    assert len(hits) == 5

    rows = _audit_rows(eng)[audit_before:]
    assert [(r[0], r[1]) for r in rows] == [("access", "recall")]  # one row for the recall, not 5
    summary = json.loads(rows[0][3])
    assert summary["ids"] == sorted(h.id for h in hits)
    assert summary["agent"] == "scout"
    assert summary["query"] == rows[0][2] == query_fingerprint("Zebra   NOTE")
    assert "zebra" not in rows[0][3].lower()  # a fingerprint, never the text
    for h in hits:
        r = eng.store.query(lambda c, m=h.id: c.memories.row(m))
        assert r["access_count"] == 1
        assert r["last_accessed_at"] == now and r["last_reinforced_at"] == now
        assert r["anchor_strength"] == pytest.approx(want[h.id], abs=1e-9)
        assert r["archive_at"] is None  # the next decay pass places it again
    missed = next(m for m in ids if m not in {h.id for h in hits})
    assert eng.store.query(lambda c: c.memories.row(missed))["access_count"] == 0
    assert eng.audit.verify().ok


def test_an_operator_search_records_nothing(eng):
    eng.add_memory("kites fly high")
    audit_before = len(_audit_rows(eng))
    assert eng.search("kites", mode="keyword", record_access=False).hits
    assert len(_audit_rows(eng)) == audit_before
