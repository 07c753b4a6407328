"""Re-embedding a store with another registered model (issue #26), on SQLite and PostgreSQL:
interrupted and resumed, search on the old vectors until the switch, audited, edits during a
reembed, and the registry's refusals. The second model is the test-only hashing model of another
width (test-hash-256): no package here ships a second model with verifiable weights."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engine import open_engine
from engine.embed import HashEmbedder
from engine.embedding import registry
from engine.errors import InvalidInput

pytestmark = pytest.mark.backends

FACTS = [f"note {i}: the {w} in room {i % 13} needs {v} on day {i % 7}" for i, (w, v) in enumerate(
    [(w, v) for w in ("fern", "lamp", "piano", "kettle", "window", "heater") for v in ("water", "oil", "dusting", "repair", "paint", "light", "a check")]
)]  # fmt: skip


@pytest.fixture(autouse=True)
def _test_models(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMCONSOLE_TEST_MODELS", "1")
    monkeypatch.setenv("MEMCONSOLE_STATE", str(tmp_path / "state"))


@pytest.fixture
def db_path(tmp_path, backend, request):
    """A SQLite file, or a fresh PostgreSQL database of its own: a switch retypes the vector
    table, which the shared test database (emptied, not rebuilt, between tests) would keep."""
    if backend != "postgres":
        yield tmp_path / "memory.db"
        return
    server = request.getfixturevalue("pg_server")
    url = server.fresh()
    yield url
    server.drop(url)


@pytest.fixture
def heng(db_path, clock):
    e = open_engine(db_path, embedder="hash", clock=clock, actor="tester", load="now")
    e.add_memories([{"content": t} for t in FACTS], dedup=False)
    yield e
    e.close()


def _sims(e, q="piano repair room 3"):
    return [(h.id, h.breakdown.vector_similarity) for h in e.search(q, k=5, mode="vector").hits]


def test_interrupted_reembed_resumes_and_switches(heng, db_path, clock):
    before = _sims(heng)
    total = len(FACTS)
    stop = threading.Event()
    seen: list[tuple[int, int]] = []

    def progress(staged: int, of: int) -> None:
        seen.append((staged, of))
        if staged >= 10:
            stop.set()  # interrupted after the second batch of 5

    st = heng.embedding.run("test-hash-256", batch=5, progress=progress, stop=stop)
    assert (
        st.state == "interrupted" and st.target == "test-hash-256" and st.staged == 10 and st.total == total
    )
    # search still reads the old vectors, unchanged, while the new set is incomplete
    assert heng.embedding.status().model == "all-MiniLM-L6-v2"
    assert _sims(heng) == before and heng.embedder.get().dim == 384

    # resumed from another engine (a new process would do the same): only what is missing
    with open_engine(db_path, embedder="hash", clock=clock, actor="tester", load="now") as other:
        resumed: list[tuple[int, int]] = []
        st = other.embedding.run(batch=7, progress=lambda a, b: resumed.append((a, b)))
        assert st.state == "switched" and st.model == "test-hash-256" and st.dim == 256 and st.target is None
        assert resumed[0] == (10, total) and resumed[1] == (17, total)  # started past the 10 staged
        hits = other.search("piano repair room 3", k=5, mode="vector").hits
        assert hits and other.embedder.get().dim == 256
        assert [h.id for h in hits] != [] and _sims(other) != before
        acts = [r.action for r in other.audit.log(action="reembed*")]
        assert acts.count("reembed-start") == 1 and acts.count("reembed-switch") == 1
        report = other.health.doctor()  # the vectors' width is the new model's, not a fixed 384
        assert report.ok, [(c.name, c.detail) for c in report.problems]
        assert other.audit.verify().ok
    # the first engine follows the store's switch on its next search
    heng.vectors.tag_ttl = 0
    res = heng.search("piano repair room 3", k=5)
    heng.wait_for_embedder(10)
    assert heng.embedder.get().dim == 256
    assert heng.search("piano repair room 3", k=5, mode="vector").hits, res.message


def test_edit_and_add_during_reembed_are_embedded_by_the_new_model(heng):
    stop = threading.Event()
    heng.embedding.run("test-hash-256", batch=4, progress=lambda a, b: a >= 8 and stop.set(), stop=stop)
    first = min(h.id for h in heng.search("note 0", k=50, mode="keyword").hits)
    heng.memories.edit(first, "the fern moved to the attic window")
    assert heng.embedding.status().staged == 7  # the edited memory lost its staged vector
    new = heng.add_memory("a brand new memory about a violin")
    st = heng.embedding.run()
    assert st.state == "switched" and st.total == len(FACTS) + 1
    model = HashEmbedder(256)
    for mid, text in (
        (first, "the fern moved to the attic window"),
        (new, "a brand new memory about a violin"),
    ):
        got = heng.vectors.vector_of(mid)
        assert got is not None and got.shape == (256,)
        assert float(np.dot(got, model.embed([text])[0])) > 0.9999  # the new model, of the new text


def test_cancel_and_refusals(heng):
    with pytest.raises(InvalidInput, match="unknown embedding model"):
        heng.embedding.run("no-such-model")
    with pytest.raises(InvalidInput, match="already all-MiniLM-L6-v2"):
        heng.embedding.start("all-MiniLM-L6-v2")
    heng.embedding.start("test-hash-256")
    assert heng.embedding.status().target == "test-hash-256"
    st = heng.embedding.cancel()
    assert st.target is None and st.model == "all-MiniLM-L6-v2"
    with pytest.raises(InvalidInput, match="no reembed"):
        heng.embedding.cancel()


def test_test_models_hidden_unless_enabled(monkeypatch):
    monkeypatch.delenv("MEMCONSOLE_TEST_MODELS")
    assert [m.id for m in registry.models()] == ["all-MiniLM-L6-v2"]
    with pytest.raises(InvalidInput):
        registry.model("test-hash-256")


@pytest.mark.sqlite_only("the OS user owning the file is what makes a viewer on SQLite")
def test_reembed_needs_admin(tmp_path, backend):
    import os

    from engine.errors import Refused

    if os.getuid() != 0:
        pytest.skip("needs root to hand the database to another OS user")
    db = tmp_path / "m.db"
    with open_engine(db, embedder="hash") as e:
        e.add_memory("deploys need a change ticket")
    for p in tmp_path.iterdir():
        if p.name.startswith("m.db"):
            os.chown(p, 65534, 65534)
    with open_engine(db, embedder="hash", label="mallory") as e:
        assert e.embedding.status().model == "all-MiniLM-L6-v2"  # reading is allowed
        for call in (lambda: e.embedding.run("test-hash-256"), lambda: e.embedding.start("test-hash-256"),
                     e.embedding.cancel):  # fmt: skip
            with pytest.raises(Refused, match="admin"):
                call()
        assert e.embedding.status().target is None


def test_a_stale_process_never_writes_a_vector_of_the_old_width(heng, db_path, clock):
    heng.vectors.tag_ttl = 3600  # this process looked at the tag just now, before the switch
    heng.vectors.tag(fresh=True)
    with open_engine(db_path, embedder="hash", clock=clock, load="now") as other:
        other.embedding.run("test-hash-256", batch=64)
    heng.vectors.tag_ttl = 0  # its next write looks again (within a second, as tag_ttl is)
    mid = heng.add_memory("written by a process still holding the old model")
    assert heng.vectors.vector_of(mid) is None  # no 384-wide vector in a 256-wide store
    heng.wait_for_embedder(10)
    assert heng.embedder.get().dim == 256 and heng.memories.backfill_vectors() >= 1
    assert heng.vectors.vector_of(mid).shape == (256,)


@pytest.mark.sqlite_only("the export format is the same from both backends")
def test_an_export_carries_its_model_and_an_import_keeps_only_same_model_vectors(heng, tmp_path, clock):
    heng.embedding.run("test-hash-256", batch=64)
    out = tmp_path / "dump.jsonl"
    heng.importers.export_jsonl(str(out))
    with open_engine(
        tmp_path / "same.db", embedder="hash", clock=clock, load="now", auto_backfill=False
    ) as e:
        from engine.embedding import tag as model_tag

        def same_model(c):  # an empty store of the same model (its vector table 256 wide), unaudited
            e.vectors.backend.switch(c, 256)
            model_tag.put(c, "test-hash-256", 256)

        e.store.write(same_model)
        e.vectors.tag(fresh=True)
        e.importers.jsonl(str(out))
        assert e.memories.pending_vectors() == 0 and e.vectors.vector_of(1).shape == (256,)
    with open_engine(
        tmp_path / "other.db", embedder="hash", clock=clock, load="now", auto_backfill=False
    ) as e:
        e.importers.jsonl(str(out))  # a MiniLM store: the 256-wide vectors are not taken
        assert e.memories.pending_vectors() == len(FACTS) and e.vectors.vector_of(1) is None
        assert e.memories.backfill_vectors() == len(FACTS) and e.vectors.vector_of(1).shape == (384,)
