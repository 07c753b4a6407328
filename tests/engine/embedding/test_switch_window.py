"""The same-width model switch (issue #26 (b)): a process that has not yet re-read the store's
model tag (it trusts a read for `tag_ttl`) must neither search another model's vectors with its
query nor store its old model's vectors after a switch of the same width. The tag is checked in
the vectors' own snapshot (KNN), inside the write (put) and whenever the matrix syncs changes.

The switch is made by another engine in one write, as reembed's switch writes it: every memory
logged in the change feed and the tag naming another model of the same width (384)."""

from __future__ import annotations

import pytest

from engine import open_engine
from engine.embedding import tag as model_tag
from engine.retrieval.filters import Filters

pytestmark = pytest.mark.backends

OTHER = "test-other-384"  # a model of the same width as the store's: only the tag tells them apart
FACTS = [f"the {w} in room {i} needs {v}" for i, (w, v) in enumerate(
    [(w, v) for w in ("fern", "lamp", "piano", "kettle") for v in ("water", "oil", "repair")]
)]  # fmt: skip


@pytest.fixture
def db_path(tmp_path, backend, request):
    if backend != "postgres":
        yield tmp_path / "memory.db"
        return
    server = request.getfixturevalue("pg_server")
    url = server.fresh()
    yield url
    server.drop(url)


@pytest.fixture
def stale(db_path, clock):
    """An engine that read the tag just now and trusts it for an hour (the 1 s window, held open)."""
    e = open_engine(db_path, embedder="hash", clock=clock, actor="tester", load="now", auto_backfill=False)
    e.add_memories([{"content": t} for t in FACTS], dedup=False)
    e.vectors.tag_ttl = 3600
    e.vectors.tag(fresh=True)
    yield e
    e.close()


def _switch_elsewhere(db_path, clock) -> None:
    with open_engine(db_path, embedder="hash", clock=clock, load="now", auto_backfill=False) as other:

        def switch(c):
            c.memories.mark_all_embedded()  # what reembed's switch logs: every process's matrix reloads
            model_tag.put(c, OTHER, 384)

        other.store.write(switch)


def test_a_stale_search_reads_no_vector_of_the_new_model(stale, db_path, clock):
    q = stale.embedder.get().embed(["piano repair"])[0]
    assert stale.vectors.knn_sql(q, 5, Filters())  # before: the store's vectors are its model's
    _switch_elsewhere(db_path, clock)
    assert stale.vectors.tag().model != OTHER  # it has not looked again: the window is open
    assert stale.vectors.knn_sql(q, 5, Filters()) == []  # its query never meets the new model's vectors
    assert stale.vectors.tag().model == OTHER  # and the empty answer made it look: it follows now
    stale.vectors.tag_ttl = 0
    assert stale.search("piano repair", k=3, mode="vector").hits  # the embedder followed (same width)


def test_a_stale_matrix_is_dropped_at_the_switch(stale, db_path, clock):
    stale.vectors.keep_in_memory()
    assert stale.vectors.live_matrix() is not None
    _switch_elsewhere(db_path, clock)
    assert stale.vectors.live_matrix() is None  # its vectors are another model's now
    q = stale.embedder.get().embed(["piano repair"])[0]
    assert stale.vectors.knn(q, 5, Filters()) == []  # and the SQL path checks the tag too


def test_a_stale_write_stores_no_vector_of_the_old_model(stale, db_path, clock):
    _switch_elsewhere(db_path, clock)
    mid = stale.add_memory("written by a process still holding the old model", dedup=False)
    assert stale.vectors.vector_of(mid) is None  # same width, but not the store's model
    assert stale.memories.pending_vectors() == 1  # waits for the backfill with the store's model
    stale.vectors.tag(fresh=True)
    assert stale.memories.backfill_vectors() == 1 and stale.vectors.vector_of(mid) is not None
