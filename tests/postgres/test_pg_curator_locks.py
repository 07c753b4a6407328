"""On PostgreSQL an approval holds its proposal's members from the stale check to the commit
(issue #24, SELECT ... FOR UPDATE in the storage layer): a concurrent edit of a member waits for
the apply instead of slipping in between the check and the apply it voids."""

from __future__ import annotations

import threading
import time

from engine import FixedClock, HashEmbedder, open_engine
from engine.curator import state as curator_state
from tests.engine.curator_helpers import OTHER, TWIN_A, TWIN_B

T0 = "2026-01-01T00:00:00Z"


def _open(url: str, actor: str):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor=actor, load="now")


def test_a_member_edit_waits_for_the_apply_that_checked_it(pg_db, monkeypatch):
    a, b = _open(pg_db, "curator-op"), _open(pg_db, "agent-b")
    try:
        m1 = a.add_memory(TWIN_A, agent="atlas", importance=0.9, dedup=False)
        m2 = a.add_memory(TWIN_B, agent="atlas", dedup=False)
        a.add_memory(OTHER, agent="atlas", dedup=False)
        pid = [p for p in a.curator.run().proposals if p.kind == "merge"][0].id
        checked, release = threading.Event(), threading.Event()
        real = curator_state.check_unchanged

        def check_then_pause(*args, **kw):
            real(*args, **kw)
            if threading.current_thread().name == "approver":
                checked.set()
                release.wait(20)

        monkeypatch.setattr(curator_state, "check_unchanged", check_then_pause)
        errors: list[BaseException] = []

        def run(fn):
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        approver = threading.Thread(target=run, args=(lambda: a.curator.approve(pid),), name="approver")
        approver.start()
        assert checked.wait(20), errors
        edited_at: list[float] = []
        editor = threading.Thread(
            target=run,
            args=(lambda: (b.memories.edit(m2, TWIN_B + " (moved)"), edited_at.append(time.monotonic())),),
        )
        editor.start()
        time.sleep(1.5)
        waited = not edited_at  # the member is held: the edit has not happened
        released_at = time.monotonic()
        release.set()
        approver.join(30)
        editor.join(30)
        assert waited, "a member was edited between the approval's stale check and its apply"
        assert not errors, errors
        assert a.curator.get(pid).proposal.status == "applied"
        assert edited_at and edited_at[0] >= released_at
        assert a.audit.verify().ok
        assert m1 != m2
    finally:
        a.close()
        b.close()
