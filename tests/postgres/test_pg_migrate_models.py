"""`migrate` between stores whose vectors are not 384 wide (issue #26): a store re-embedded with
the test-only model test-hash-256 goes SQLite -> PostgreSQL -> SQLite with its model tag and every
vector byte for byte; a target that holds another model's records is refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from engine import FixedClock, open_engine
from engine.errors import InvalidInput
from engine.importers.migrate import migrate

T0 = "2026-01-01T00:00:00Z"
FACTS = [f"note {i}: the {w} in room {i % 5} needs care" for i, w in enumerate(
    ["fern", "lamp", "piano", "kettle", "window", "heater", "clock", "rug", "desk", "shelf"] * 2
)]  # fmt: skip


@pytest.fixture(autouse=True)
def _test_models(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMCONSOLE_TEST_MODELS", "1")
    monkeypatch.setenv("MEMCONSOLE_STATE", str(tmp_path / "state"))


def _open(where):
    return open_engine(where, embedder="hash", clock=FixedClock(T0), actor="tester", load="now")


def _vectors(where) -> tuple[str, int, dict[int, bytes]]:
    with _open(where) as eng:
        st = eng.embedding.status()
        ids = [m.id for m in eng.memories.list(limit=1000)]
        vecs = {i: eng.ctx.vectors.vector_of(i) for i in ids}
        assert eng.audit.verify().ok
        return st.model, st.dim, {i: v.tobytes() for i, v in vecs.items() if v is not None}


@pytest.fixture
def reembedded(tmp_path):
    path = tmp_path / "wide.db"
    with _open(path) as eng:
        eng.add_memories([{"content": t} for t in FACTS], dedup=False)
        assert eng.embedding.run("test-hash-256").state == "switched"
    return path


def test_a_256_wide_store_migrates_to_postgres_and_back_intact(reembedded, pg_url, tmp_path):
    model, dim, before = _vectors(reembedded)
    assert (model, dim) == ("test-hash-256", 256) and len(before) == len(FACTS)
    res = migrate(str(reembedded), pg_url, actor="mover")
    assert res.vectors == len(FACTS) and res.added["memory"] == len(FACTS)
    assert _vectors(pg_url) == (model, dim, before)
    with _open(pg_url) as eng:  # searchable at the new width: the query is embedded 256 wide
        hits = eng.search("piano room 2", k=3, mode="vector").hits
        assert hits and eng.embedder.get().dim == 256 and "piano" in hits[0].content
    back = tmp_path / "back.db"
    migrate(pg_url, str(back))
    assert _vectors(back) == (model, dim, before)


def test_a_target_of_another_model_is_refused_in_one_line(reembedded, pg_url, tmp_path):
    with _open(pg_url) as eng:
        eng.add_memory("a MiniLM-tagged store's own memory")
    with pytest.raises(InvalidInput) as got:
        migrate(str(reembedded), pg_url, force=True)
    line = str(got.value)
    assert "\n" not in line and "all-MiniLM-L6-v2" in line and "test-hash-256" in line
    with _open(pg_url) as eng:  # nothing moved
        assert [m.content for m in eng.memories.list()] == ["a MiniLM-tagged store's own memory"]
        assert np.asarray(eng.ctx.vectors.vector_of(eng.memories.list()[0].id)).shape == (384,)
