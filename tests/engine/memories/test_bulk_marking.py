"""Marked memories at once (issue 16): archive_many / pin_many write every id in one transaction,
one audit row per memory changed, and report a missing or already-done id per id."""

from __future__ import annotations

import pytest

from engine.audit import log as audit_log
from engine.errors import InvalidInput


def _three(eng):
    return [eng.add_memory(f"fact {w} about the release train", dedup=False) for w in ("one", "two", "three")]


def test_archive_many_changes_each_once_audits_each_and_reports_per_id(eng):
    a, b, c = _three(eng)
    eng.memories.archive(c, reason="earlier")
    before = len(eng.audit.log(limit=10_000))
    out = eng.memories.archive_many([a, b, c, 999, a], reason="triage")
    assert [(o.id, o.outcome) for o in out] == [(a, "done"), (b, "done"), (c, "unchanged"), (999, "missing")]
    assert [o.ok for o in out] == [True, True, True, False]
    assert out[2].note == "already archived" and out[3].note == "no memory with id 999"
    assert out[0].tier == "archived" and out[0].pinned is False
    assert {eng.memories.get(i).tier for i in (a, b, c)} == {"archived"}
    entries = eng.audit.log(limit=10_000)
    assert len(entries) == before + 2  # one row per memory changed; none for c or 999
    new = [e for e in entries if e.action == "archive" and e.reason == "triage"]
    assert sorted(int(e.target_id) for e in new) == sorted([a, b])
    assert all(e.summary == {"tier": ["active", "archived"]} for e in new)
    assert eng.audit.verify().ok


def test_pin_many_pins_and_skips_the_pinned(eng):
    a, b, _ = _three(eng)
    eng.memories.pin(b)
    out = eng.memories.pin_many([a, b], reason="keep")
    assert [(o.outcome, o.pinned) for o in out] == [("done", True), ("unchanged", True)]
    assert eng.memories.get(a).pinned
    pins = [e for e in eng.audit.log(limit=100) if e.action == "pin" and e.reason == "keep"]
    assert [int(e.target_id) for e in pins] == [a] and pins[0].summary == {"pinned": [False, True]}


def test_one_transaction_a_failure_part_way_writes_nothing(eng, monkeypatch):
    a, b, c = _three(eng)
    real, calls = audit_log.append, []

    def fail_on_second(conn, **kw):
        calls.append(kw["target_id"])
        if len(calls) == 2:
            raise RuntimeError("disk gone")
        return real(conn, **kw)

    monkeypatch.setattr(audit_log, "append", fail_on_second)
    with pytest.raises(RuntimeError):
        eng.memories.archive_many([a, b, c])
    monkeypatch.setattr(audit_log, "append", real)
    assert {eng.memories.get(i).tier for i in (a, b, c)} == {"active"}  # a rolled back too


def test_bad_ids_are_refused_before_anything_is_written(eng):
    (a, *_) = _three(eng)
    with pytest.raises(InvalidInput):
        eng.memories.archive_many([a, "x"])
    assert eng.memories.get(a).tier == "active"
    assert eng.memories.archive_many([]) == []
