"""The header's failing-check count on every live refresh (issue #26): with nothing due it runs no
check; on a read-only engine (a standby, `--read-only`), which cannot store an outcome and so never
clears a due flag, a due check runs once per change of the data, not on every refresh, and the count
is the outcome it computed (not the primary's stale stored one)."""

from __future__ import annotations

import time

import pytest

from engine import HashEmbedder, open_engine

pytestmark = pytest.mark.backends

SECRET = "The boathouse code Heron-51 opens the west shed"
TWIN = "The boathouse code Heron-51 opens the west shed!"


def counted(eng) -> list[int]:
    """Count the searches the engine's checks run."""
    calls = [0]
    real = eng.checks.retrieval.search

    def search(req):
        calls[0] += 1
        return real(req)

    eng.checks.retrieval.search = search
    return calls


def moved(eng, since: int) -> None:
    """Until the engine sees another process's commit (PostgreSQL hears it by LISTEN/NOTIFY)."""
    deadline = time.monotonic() + 10
    while eng.store.data_version() == since and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_refresh_with_nothing_due_runs_no_check(eng):
    a = eng.add_memory(SECRET, agent="atlas", dedup=False)
    eng.checks.add("boathouse code", a, k=2, agent="atlas")
    calls = counted(eng)
    for _ in range(3):
        assert eng.checks.failing() == []
    assert calls[0] == 0


def test_a_read_only_engine_runs_a_due_check_once_per_change(eng, db_path, clock):
    a = eng.add_memory(SECRET, agent="atlas", dedup=False)
    eng.add_memory(TWIN, agent="atlas", dedup=False)
    c = eng.checks.add("boathouse code", a, k=2, agent="atlas")
    p = eng.curator.approve(eng.curator.run().proposals[0].id)  # merges a away: the check is due
    ro = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="tester", read_only=True)
    try:
        calls = counted(ro)
        (bad,) = ro.checks.failing()
        assert bad.id == c.id and bad.status == "FAIL" and bad.last_why
        ran = calls[0]
        assert ran >= 1
        for _ in range(3):  # live refreshes, nothing changed
            assert [x.id for x in ro.checks.failing()] == [c.id]
        assert calls[0] == ran
        assert ro.checks.get(c.id).due  # it stored nothing
        before = ro.store.data_version()
        eng.curator.undo(p.id)  # the writer changes the data: the due check runs again, and passes
        moved(ro, before)
        assert ro.checks.failing() == []
        assert calls[0] > ran
    finally:
        ro.close()
