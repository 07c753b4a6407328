"""pgvector on a real server: exact below the threshold, the HNSW index with iterative scan past it
(a narrow filter still gets k rows), and the in-memory matrix following another engine's writes
through the change feed (`vector_changes`, filled by triggers under the writers' lock)."""

from __future__ import annotations

import numpy as np
import pytest

from engine import FixedClock, HashEmbedder, open_engine
from engine.retrieval.filters import Filters
from engine.retrieval.vector_matrix import VectorMatrix
from tests.direct_sql import direct

T0 = "2026-01-01T00:00:00Z"


def _open(url):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="vec", load="now")


def _unit(seed: int) -> bytes:
    v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
    return (v / np.linalg.norm(v)).tobytes()


def _fill(e, n=200, rare=3):
    texts = [f"note {i} about topic {i % 17} and thing {i % 5}" for i in range(n)]
    agents = ["rare" if i % (n // rare) == 0 else "common" for i in range(n)]
    # One batch (a transaction per 256), not one audited write per memory: 200 single writes took
    # ~13 s of each test on the loaded CI machine; what these tests read is the vectors, the same.
    items = [{"content": t, "agent": a, "category": a} for t, a in zip(texts, agents, strict=True)]
    return e.add_memories(items, dedup=False)


@pytest.fixture(scope="module")
def filled(pg_server):
    """(URL, ids) of one database holding _fill's 200 memories, shared by the tests that only read
    it (each changes its own engine's vector-store settings, never the rows)."""
    url = pg_server.fresh()
    e = _open(url)
    try:
        ids = _fill(e)
    finally:
        e.close()
    yield url, ids
    pg_server.drop(url)


def test_knn_is_exact_below_the_threshold_and_hnsw_past_it(filled):
    e = _open(filled[0])
    try:
        vs = e.store.vector_store
        q = _unit(1)
        with e.store.reading() as c:
            vs.exact_below = 10**9
            exact = vs.knn(c, q, 10, Filters(("active", "core")))
            assert vs.last_path == "exact"
            plan = " ".join(
                r[0]
                for r in direct(c)
                .execute(
                    "EXPLAIN SELECT memory_id, (embedding <=> ?) + 0 AS d FROM memory_vectors"
                    " ORDER BY d, memory_id LIMIT 10",
                    [np.frombuffer(q, dtype=np.float32)],
                )
                .fetchall()
            )
            assert "memory_vectors_hnsw" not in plan
            vs.exact_below, vs._size = 0, (0.0, 0)
            direct(c).execute("SET LOCAL enable_seqscan = off")  # 200 rows: make the planner take the index
            approx = vs.knn(c, q, 10, Filters(("active", "core")))
            assert vs.last_path == "hnsw"
        assert [i for i, _ in approx] == [i for i, _ in exact]  # 200 vectors: the graph finds all
        assert np.allclose([d for _, d in approx], [d for _, d in exact], atol=1e-6)
    finally:
        e.close()


def test_a_filter_that_keeps_fewer_rows_than_the_threshold_is_scanned_exactly(filled):
    e = _open(filled[0])
    try:  # 200 vectors, 4 of agent "rare"
        direct(e.store).execute("ANALYZE memory_vectors")
        vs = e.store.vector_store
        vs.exact_below, vs._size = 50, (0.0, 0)
        with e.store.reading() as c:
            vs.knn(c, _unit(4), 10, Filters(("active", "core")))
            assert vs.last_path == "hnsw"  # 200 rows pass: past the threshold
            got = vs.knn(c, _unit(4), 10, Filters(("active", "core"), agent="rare"))
            assert vs.last_path == "exact" and len(got) == 4  # ~4 estimated: scanned
            vs.exact_below, vs._size = 10**6, (0.0, 0)
            vs.knn(c, _unit(4), 10, Filters(("active", "core")))
            assert vs.last_path == "exact"  # the table itself is below the threshold
    finally:
        e.close()


def test_a_narrow_filter_still_gets_k_rows_from_hnsw(filled):
    """ef_search 4 and a filter 4 rows of 200 pass: without iterative scan the index would hand
    back 4 neighbours and the filter would keep almost none. (A category filter: no btree index on
    it, so the plan stays on HNSW.)"""
    e = _open(filled[0])
    try:
        ids = filled[1]
        vs = e.store.vector_store
        vs.exact_below, vs.ef_search, vs._size = 0, 1, (0.0, 0)
        with e.store.reading() as c:
            direct(c).execute("SET LOCAL enable_seqscan = off")
            got = vs.knn(c, _unit(2), 4, Filters(("active", "core"), category="rare"))
            assert vs.last_path == "hnsw"
            vs.iterative = "off"
            without = vs.knn(c, _unit(2), 4, Filters(("active", "core"), category="rare"))
        rare = {ids[i] for i in range(200) if i % (200 // 3) == 0}
        assert len(rare) == 4 and {i for i, _ in got} == rare
        assert len(without) < 4  # what iterative scan is for
    finally:
        e.close()


def test_the_matrix_follows_another_engines_writes_through_the_feed(pg_db):
    console, agent = _open(pg_db), _open(pg_db)
    try:
        first = _fill(agent, n=40, rare=2)
        store = console.store
        m = VectorMatrix(store.vector_store, store.feed, bulk=store.curator)
        with store.reading() as c:
            m.sync(c)
        assert sorted(m.ids[: m.n].tolist()) == sorted(first)
        later = [agent.add_memory(f"fresh note {i} from another machine", dedup=False) for i in range(5)]
        agent.memories.archive(first[0], reason="old")
        with store.reading() as c:
            assert m.sync(c)  # something changed
            q = np.frombuffer(_unit(3), dtype=np.float32)
            f = Filters()
            exact = store.vector_store.knn(c, _unit(3), 10, Filters(f.tiers))
        alive = set(m.ids[: m.n][m.alive[: m.n]].tolist())
        assert set(later) <= alive and first[0] in alive
        assert [i for i, _ in m.knn(q, 10, f)] == [i for i, _ in exact]
        assert first[0] not in [i for i, _ in m.knn(q, 50, f)]  # archived: outside the default tiers
        assert first[0] in [i for i, _ in m.knn(q, 50, Filters(tiers=("archived",)))]
    finally:
        console.close()
        agent.close()


def test_vectors_read_in_binary_form_are_the_stored_float32_bit_for_bit(filled):
    """The store reads vectors as `vector_send` (engine/storage/postgres/vector_wire.py): every
    read path — one vector, entries, the scan, the curator's matrix — gives the very float32 the
    text form gives, and a damaged value is refused in one line."""
    from pgvector import Vector

    from engine.errors import EngineError
    from engine.storage.postgres.vector_wire import array_of

    e = _open(filled[0])
    try:
        vs = e.store.vector_store
        with e.store.reading() as c:
            as_text = {
                int(r[0]): np.asarray(Vector.from_text(r[1]).to_numpy(), dtype=np.float32).tobytes()
                for r in c.execute("SELECT memory_id, embedding::text FROM memory_vectors").fetchall()
            }
            some = sorted(as_text)[:7]
            assert vs.embedding(c, some[0]) == as_text[some[0]]
            assert {int(r[0]): r[1] for r in vs.entries(c, some)} == {m: as_text[m] for m in some}
            assert dict((int(m), b) for batch in vs.scan(c) for m, b in batch) == as_text
            ids, mat = e.store.curator.all_vectors(c)
        assert {int(m): row.tobytes() for m, row in zip(ids, mat, strict=True)} == as_text
        with pytest.raises(EngineError, match="damaged"):
            array_of(b"\x01\x80\x00\x00" + b"\x00" * 8)  # says 384 dimensions, holds 2
    finally:
        e.close()
