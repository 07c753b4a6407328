"""The engine on PostgreSQL (a first slice): open and reconcile, add_memory / add_memories,
keyword-only and hybrid search, sessions with messages and their search, the audit chain, and
the clear refusals of what the slice does not cover."""

from __future__ import annotations

import psycopg
import pytest

from engine import EngineError, FixedClock, HashEmbedder, open_engine
from tests.direct_sql import direct

T0 = "2026-01-01T00:00:00Z"


def _open(url: str, **kw):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="tester", load="now", **kw)


@pytest.fixture
def pg_eng(pg_url):
    e = _open(pg_url)
    yield e
    e.close()


def test_open_reconciles_once_and_reopens(pg_url):
    e = _open(pg_url)
    assert "memories" in e.reconciled.created and "memory_vectors" in e.reconciled.created
    e.close()
    again = _open(pg_url)
    assert again.reconciled.created == [] and again.reconciled.from_generation >= 2
    again.close()


def test_add_memory_and_keyword_search(pg_eng):
    a = pg_eng.add_memory("The deploy script lives in ops/deploy.sh and needs VPN access")
    b = pg_eng.add_memory("Alice prefers tea over coffee in the morning")
    res = pg_eng.search("deploying scripts", mode="keyword")
    assert res.mode == "keyword"
    assert [h.id for h in res.hits] == [a]
    assert res.hits[0].breakdown.bm25_rank == 1 and res.hits[0].breakdown.bm25_score is not None
    assert pg_eng.add_memory("Alice prefers tea over coffee in the morning") == b


def test_add_memories_and_hybrid_search(pg_eng):
    ids = pg_eng.add_memories(
        [
            {"content": "Postgres backups run nightly at 02:00 UTC", "agent": "ops"},
            {"content": "The staging database is PostgreSQL 16 with pgvector", "agent": "ops"},
            {"content": "Bob likes hiking in the Alps", "agent": "life", "user": "bob"},
        ]
    )
    assert len(ids) == 3
    res = pg_eng.search("postgresql backups", mode="hybrid")
    assert res.mode == "hybrid" and res.hits
    assert {h.id for h in res.hits[:2]} == {ids[0], ids[1]}
    only_bob = pg_eng.search("hiking", mode="hybrid", user="bob")
    assert [h.id for h in only_bob.hits] == [ids[2]] and only_bob.hits[0].user == "bob"
    vec = pg_eng.search("hiking alps", mode="vector", agent="life")
    assert [h.id for h in vec.hits] == [ids[2]]


def test_sessions_messages_and_their_search(pg_eng):
    sid = pg_eng.sessions.add(agent="claude", title="deploy chat")
    mids = pg_eng.sessions.add_messages(
        sid,
        [
            {"role": "user", "content": "How do I roll back the deployment?"},
            {"role": "assistant", "content": "Run rollback.sh with the previous release tag."},
        ],
    )
    assert len(mids) == 2
    detail = pg_eng.sessions.get(sid)
    assert [m.id for m in detail.messages] == mids
    hits = pg_eng.sessions.search_messages("rolling back deployments")
    assert hits and hits[0].message.id == mids[0] and hits[0].session_title == "deploy chat"


def test_audit_chain_verifies(pg_eng):
    pg_eng.add_memory("one fact")
    pg_eng.add_memories([{"content": "two facts"}, {"content": "three facts"}])
    chk = pg_eng.audit.verify()
    assert chk.ok, chk.message
    assert chk.rows >= 2


def test_change_counter_moves_on_write_only(pg_eng):
    before = pg_eng.data_version()
    pg_eng.search("anything", mode="keyword", record_access=False)  # a read: nothing logged
    assert pg_eng.data_version() == before
    pg_eng.add_memory("a change")
    assert pg_eng.data_version() > before


def test_dry_run_counts_then_rolls_back(pg_eng):
    assert (
        pg_eng.store.dry_run(
            lambda c: direct(c).execute("INSERT INTO meta(key, value) VALUES ('x', '1')").rowcount
        )
        == 1
    )
    assert direct(pg_eng.store).one("SELECT count(*) FROM meta WHERE key = 'x'")[0] == 0


def test_what_the_slice_does_not_cover_says_so(pg_eng):
    pg_eng.add_memory("カタカナのメモ and words")
    assert pg_eng.search("カタカナ", mode="keyword").hits  # CJK is covered now (helper 14C)
    # forget's eraser is built now (helper 14B: tests/postgres/test_pg_forget.py)


def test_a_foreign_database_is_refused_before_writing(pg_url):
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("CREATE TABLE invoices (id int)")
    with pytest.raises(EngineError, match="not a memconsole database"):
        _open(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'").fetchone()[0] == 0


def test_a_newer_generation_is_refused(pg_url):
    _open(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute("UPDATE meta SET value = '99' WHERE key = 'generation'")
    with pytest.raises(EngineError, match="newer memconsole"):
        _open(pg_url)


def test_explain_gives_full_keyword_ranks(pg_eng):
    ids = pg_eng.add_memories([{"content": f"note {i} about gardening tools"} for i in range(5)])
    target = pg_eng.add_memory("gardening gardening gardening every weekend")
    ex = pg_eng.explain("gardening", target, k=3)
    assert ex.found and ex.bm25_rank == 1 and ex.bm25_matches == len(ids) + 1
