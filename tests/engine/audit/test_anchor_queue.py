"""Issue #24: writers queued on the audit anchor's lock share one anchor move. Once the anchor's
last move read the log after a writer asked for the lock (its commit done), that writer's rows are
in it: the writer reads nothing and moves nothing. In the fleet bench 16 agents on PostgreSQL spent
~60% of their time waiting on this lock, each repeating the move the one before it had made."""

from __future__ import annotations

import time

import pytest

from engine.audit.anchor import COVERS, advance, database_id
from engine.audit.hashing import hasher

pytestmark = pytest.mark.backends


class Untouchable:
    """A connection that must not be used."""

    def __getattr__(self, name: str):
        raise AssertionError(f"the anchor read the database ({name})")


def test_a_queued_writer_finds_its_rows_anchored_and_reads_nothing(eng):
    asked = time.monotonic()  # a writer whose commit is done asks for the lock now
    eng.add_memory("deploys need a change ticket")  # another writer's hook moves the anchor
    assert eng.store.hook_errors == []
    with eng.store.reading() as c:
        dbid, head = database_id(c), c.audit_queries.head()
    rec = advance(Untouchable(), dbid, head, hasher(), asked=asked)
    assert rec["last_id"] == head["id"] and rec[COVERS][1] > asked
    # asked after that move: its read may predate this writer's commit, so the anchor reads again
    with pytest.raises(AssertionError, match="the anchor read the database"):
        advance(Untouchable(), dbid, head, hasher(), asked=time.monotonic())


def test_a_cut_tail_is_still_caught_by_the_next_writer_that_reads(eng):
    eng.add_memory("deploys need a change ticket")
    eng.add_memory("billing runs on the first of the month")
    with eng.store.reading() as c:
        last = c.audit_queries.head()["id"]
    from tests.direct_sql import direct

    direct(eng.store).execute("DELETE FROM audit WHERE id = ?", (last,))
    eng.add_memory("the api gateway times out after 30 s")  # asks after the last move: it reads
    assert eng.store.hook_errors, "a cut tail went unseen by the anchor"
    assert not eng.audit.verify().ok
