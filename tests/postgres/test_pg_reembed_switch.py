"""A reembed's switch on PostgreSQL builds nothing slow inside its transaction (issue #26 (c)): the
new vector table and its HNSW index are built before, in writes of their own, so writers wait
for no index build. Proved from the catalog: the HNSW index on the vector table after the switch
was created by another transaction than the one that wrote the `reembed-switch` audit row (xmin of
its pg_index row, untouched by the renames). The swapped table keeps the old one's GRANTs, its
indexes' names, and its key to memories (deletes cascade; the key is validated after the switch)."""

from __future__ import annotations

import uuid

import pytest

from engine import open_engine
from tests.direct_sql import direct

FACTS = [f"note {i}: the {w} in room {i % 7} needs care" for i, w in enumerate(
    ["fern", "lamp", "piano", "kettle", "window", "heater"] * 5
)]  # fmt: skip


@pytest.fixture(autouse=True)
def _test_models(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMCONSOLE_TEST_MODELS", "1")
    monkeypatch.setenv("MEMCONSOLE_STATE", str(tmp_path / "state"))


@pytest.fixture
def url(pg_server):
    u = pg_server.fresh()
    yield u
    pg_server.drop(u)


def test_the_switch_builds_no_index_and_keeps_grants_and_the_key(url, clock):
    role = f"mc_probe_{uuid.uuid4().hex[:8]}"
    with open_engine(url, embedder="hash", clock=clock, actor="tester", load="now") as eng:
        eng.add_memories([{"content": t} for t in FACTS], dedup=False)
        d = direct(eng.store)
        d.execute(f"CREATE ROLE {role} NOLOGIN")
        try:
            d.execute(f"GRANT SELECT ON memory_vectors TO {role}")
            assert eng.embedding.run("test-hash-256", batch=8).state == "switched"
            built = d.one(
                "SELECT x.xmin::text::bigint FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid"
                " WHERE i.relname = 'memory_vectors_hnsw'"
            )[0]
            switched = d.one("SELECT xmin::text::bigint FROM audit WHERE action = 'reembed-switch'")[0]
            assert built != switched  # the HNSW build was not the switch's work
            assert (
                d.one(
                    "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                    " WHERE attrelid = 'memory_vectors'::regclass AND attname = 'embedding'"
                )[0]
                == "vector(256)"
            )
            names = {
                r[0] for r in d.all("SELECT indexname FROM pg_indexes WHERE tablename = 'memory_vectors'")
            }
            assert {"memory_vectors_pkey", "memory_vectors_hnsw", "memory_vectors_agent"} <= names
            assert d.one(f"SELECT has_table_privilege('{role}', 'memory_vectors', 'SELECT')")[0]
            assert d.one(
                "SELECT convalidated FROM pg_constraint WHERE conrelid = 'memory_vectors'::regclass"
                " AND contype = 'f'"
            )[0]
            assert d.one("SELECT to_regclass('memory_vectors_next')")[0] is None
            assert d.one("SELECT count(*) FROM memory_vectors")[0] == len(FACTS)
            gone = eng.memories.list(limit=1)[0].id
            eng.forget.run("memory", [gone], "a test removes one")
            assert d.one("SELECT count(*) FROM memory_vectors WHERE memory_id = ?", (gone,))[0] == 0
            assert eng.search("piano room 2", k=3, mode="vector").hits
            assert eng.health.doctor().ok
        finally:
            d.execute(f"DROP OWNED BY {role}")
            d.execute(f"DROP ROLE {role}")


def test_writes_during_the_build_reach_the_new_table(url, clock):
    """A memory added, one edited and one deleted after the new table was built, before the switch:
    the switch catches them up (or leaves the new one to the backfill), nothing of the old model
    is kept and nothing deleted comes back."""
    with open_engine(url, embedder="hash", clock=clock, actor="tester", load="now") as eng:
        ids = list(eng.add_memories([{"content": t} for t in FACTS], dedup=False))
        backend = eng.vectors.backend
        real = backend.prepare_switch

        def prepare_then_write(write, dim):
            real(write, dim)
            eng.add_memory("added after the build", dedup=False)
            eng.memories.edit(ids[0], content="edited after the build: the fern moved")
            eng.forget.run("memory", [ids[1]], "a test removes one")

        backend.prepare_switch = prepare_then_write
        assert eng.embedding.run("test-hash-256", batch=64).state == "switched"
        d = direct(eng.store)
        assert d.one("SELECT count(*) FROM memory_vectors WHERE memory_id = ?", (ids[1],))[0] == 0
        eng.memories.backfill_vectors()
        assert eng.memories.pending_vectors() == 0
        assert d.one("SELECT count(*) FROM memory_vectors")[0] == len(FACTS)  # +1 added, -1 deleted
        hit = eng.search("fern moved", k=1, mode="vector").hits[0]
        assert hit.id == ids[0]
