"""Writes on PostgreSQL: many writers lose nothing and keep the keyword index whole, a commit
notifies listeners, and a rolled-back write leaves no trace in the index."""

from __future__ import annotations

import threading

import psycopg
import pytest

from engine import FixedClock, HashEmbedder, open_engine
from tests.direct_sql import direct

T0 = "2026-01-01T00:00:00Z"


def _open(url: str):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="tester", load="now")


def test_concurrent_writers_from_two_engines_lose_nothing(pg_url):
    engines = [_open(pg_url), _open(pg_url)]
    errors: list[BaseException] = []

    def writer(e, w: int) -> None:
        try:
            for i in range(15):
                e.add_memory(f"writer {w} fact {i} about zebras", dedup=False)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(engines[w % 2], w)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    e = engines[0]
    assert direct(e.store).one("SELECT count(*) FROM memories")[0] == 60
    assert direct(e.store).one("SELECT count(*) FROM fts_docs WHERE src = 'memories'")[0] == 60
    assert direct(e.store).one("SELECT count(*) FROM fts_pending")[0] == 0
    assert len(e.search("zebras", k=100, mode="keyword").hits) == 60
    assert e.audit.verify().ok
    for x in engines:
        x.close()


def test_a_commit_notifies_listeners(pg_url):
    e = _open(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as listener:
        listener.execute("LISTEN memconsole")
        e.add_memory("something new")
        got = list(listener.notifies(timeout=2.0, stop_after=1))
    from engine.storage.postgres.listen import SPREAD

    assert got and int(got[0].payload) * SPREAD <= e.data_version()
    e.close()


def test_a_failed_write_leaves_the_index_as_it_was(pg_url):
    e = _open(pg_url)
    e.add_memory("kept apples")

    def boom(conn):
        direct(conn).execute("INSERT INTO memories(content) VALUES (?)", ("lost oranges",))
        raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        e.store.write(boom)
    assert e.search("oranges", mode="keyword").hits == []
    assert direct(e.store).one("SELECT count(*) FROM fts_terms WHERE term = 'orang'")[0] == 0
    e.close()


def test_a_held_row_lock_ends_in_store_busy_after_bounded_patience(pg_url, monkeypatch):
    from engine import StoreBusy
    from engine.storage.postgres import store as pg_store
    from engine.storage.postgres import write_tx

    e = _open(pg_url)
    mid = e.add_memory("a memory someone else is editing")
    monkeypatch.setattr(pg_store, "WRITE_RETRIES", 3)
    monkeypatch.setattr(pg_store, "WRITE_TIMEOUT_S", 0.5)
    monkeypatch.setattr(write_tx, "LOCK_TIMEOUT_MS", 100)  # begin_write reads it
    with psycopg.connect(pg_url) as other:  # another machine's writer, mid-transaction on that row
        other.execute("SELECT 1 FROM memories WHERE id = %s FOR UPDATE", [mid])
        with pytest.raises(StoreBusy, match="stayed locked"):
            e.memories.reinforce(mid)
        assert e.add_memory("another memory gets in meanwhile", dedup=False) > 0  # no global lock
    e.memories.reinforce(mid)  # gets in once the row is free
    e.close()


def test_sql_postgres_reads_differently_is_a_clear_engine_error(pg_url):
    from engine import EngineError

    e = _open(pg_url)
    with pytest.raises(EngineError, match="not supported on PostgreSQL yet: a SQL function"):
        e.store.read("SELECT typeof(1)")
    with pytest.raises(EngineError, match="not supported on PostgreSQL yet: this statement"):
        e.store.read("SELECT 1 FROM memories NOT INDEXED")
    e.close()
