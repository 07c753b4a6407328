"""Matrix-ready time (issue 17): the in-memory vector matrix loads every vector through the store's
bulk read (on SQLite vec0's chunk tables, one sequential scan) and the filter fields in one
query, and ends up identical to the row-by-row load; a change burst bigger than a reload is
reloaded; anything the bulk read cannot vouch for falls back to the vector store's scan."""

from __future__ import annotations

import numpy as np
import pytest

from engine import HashEmbedder, open_engine
from engine.retrieval import vector_matrix
from engine.retrieval.filters import Filters
from engine.retrieval.vector_matrix import FIELDS, VectorMatrix
from tests.direct_sql import direct

pytestmark = pytest.mark.backends

AGENTS = ("ops", "a-very-long-agent-name", "coder", "")


def _fill(eng, n=90):
    ids = eng.add_memories(
        [
            {
                "content": f"ledger entry {i} on topic {i % 11} detail {i * 7 % 13}",
                "agent": AGENTS[i % 4],
                "category": ("ops", "decision", "people")[i % 3],
                "kind": ("episodic", "semantic")[i % 2],
                "tier": ("active", "core", "archived")[i % 3],
            }
            for i in range(n)
        ],
        dedup=False,
    )
    return [o.id if hasattr(o, "id") else o for o in ids]


def _load(eng, bulk: bool) -> VectorMatrix:
    m = VectorMatrix(eng.store.vector_store, eng.store.feed, bulk=eng.store.curator if bulk else None)
    with eng.store.reading() as c:
        m.sync(c)
    return m


def _content(m: VectorMatrix) -> dict:
    """Everything a search reads, keyed by memory id (row order is the load's business)."""
    inv = {f: {v: k for k, v in m.vocab[f].items()} for f in FIELDS}
    out = {}
    for j in range(m.n):
        if m.alive[j]:
            out[int(m.ids[j])] = (
                m.mat[j].tobytes(),
                m.bits[:, j].tobytes(),
                tuple(inv[f][int(m.codes[f][j])] for f in FIELDS),
            )
    assert all(m.row[i] == j for j, i in enumerate(m.ids[: m.n].tolist()) if m.alive[j])
    return out


def _table(eng) -> dict:
    with eng.store.reading() as c:
        rows = direct(c).execute(
            "SELECT id, tier, kind, category, agent, user FROM memories WHERE embedded = 1"
        )
        return {int(r[0]): tuple(x or "" for x in r[1:]) for r in rows}


def test_bulk_load_equals_the_row_by_row_load(eng):
    _fill(eng)
    # a deleted memory leaves an invalid slot in a vec0 chunk; the load must skip it
    eng.store.write(lambda c: direct(c).execute("DELETE FROM memories WHERE id IN (5, 17)"))
    fast, slow = _load(eng, bulk=True), _load(eng, bulk=False)
    got = _content(fast)
    assert got == _content(slow)
    assert {i: f for i, (_, _, f) in got.items()} == _table(eng)
    assert 5 not in got and fast.n == len(got) == 88
    q = np.frombuffer(got[1][0], dtype=np.float32)
    for f in (Filters(), Filters(("archived",)), Filters(("core", "active"), agent="a-very-long-agent-name")):
        assert fast.knn(q, 10, f) == slow.knn(q, 10, f)


def test_a_burst_of_changes_reloads_and_stays_equal_to_the_table(eng, monkeypatch):
    ids = _fill(eng, 60)
    m = _load(eng, bulk=True)
    monkeypatch.setattr(vector_matrix, "RELOAD_FROM", 5)
    loads = []
    orig = VectorMatrix._load_all
    monkeypatch.setattr(VectorMatrix, "_load_all", lambda self, c: (loads.append(1), orig(self, c)))
    for i in ids[:30]:
        eng.memories.set_tier(i, "archived")
    with eng.store.reading() as c:
        assert m.sync(c)
    assert loads == [1]  # 30 changes > max(5, 60 // 4): reloaded, not applied one by one
    assert {i: f for i, (_, _, f) in _content(m).items()} == _table(eng)
    eng.memories.set_tier(ids[0], "active")  # a small change is applied, not reloaded
    with eng.store.reading() as c:
        assert m.sync(c)
    assert loads == [1]
    assert {i: f for i, (_, _, f) in _content(m).items()} == _table(eng)


@pytest.mark.sqlite_only("the separator check is the same code on both; one backend is enough")
def test_a_field_holding_the_separator_falls_back_to_the_scan(eng):
    _fill(eng, 12)
    eng.add_memory("an odd agent's note", agent="odd\x1fagent", dedup=False)
    m = _load(eng, bulk=True)
    assert {i: f for i, (_, _, f) in _content(m).items()} == _table(eng)


def test_no_bulk_read_falls_back_to_the_scan(eng):
    _fill(eng, 12)

    class Refuses:
        def all_vectors(self, conn):
            return None  # e.g. an unknown sqlite-vec layout

    m = VectorMatrix(eng.store.vector_store, eng.store.feed, bulk=Refuses())
    with eng.store.reading() as c:
        m.sync(c)
    assert {i: f for i, (_, _, f) in _content(m).items()} == _table(eng)


def test_the_engine_loads_through_the_bulk_read(db_path, clock, monkeypatch):
    calls = []
    e = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="t")
    try:
        _fill(e, 20)
        orig = VectorMatrix._load_bulk
        monkeypatch.setattr(VectorMatrix, "_load_bulk", lambda self, *a: (calls.append(1), orig(self, *a))[1])
        e.vectors.keep_in_memory()
        assert calls == [1] and e.vectors.matrix is not None and e.vectors.matrix.n == 20
    finally:
        e.close()
