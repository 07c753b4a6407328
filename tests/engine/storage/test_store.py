"""The connection factory and the single write path."""

import os
import stat
import threading

import pytest

from engine import StoreBusy, open_engine
from engine.storage.sqlite import store as store_mod
from engine.storage.sqlite.store import Store

pytestmark = pytest.mark.backends


def test_connection_pragmas_and_private_file(tmp_path):
    p = tmp_path / "sub" / "m.db"
    s = Store(p)
    c = s.conn
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert c.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert c.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert c.execute("PRAGMA secure_delete").fetchone()[0] == 1
    assert c.execute("SELECT vec_version()").fetchone()[0].startswith("v0.1")
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(p.parent).st_mode) == 0o700
    s.write(lambda conn: conn.execute("CREATE TABLE t(x)"))
    assert stat.S_IMODE(os.stat(str(p) + "-wal").st_mode) == 0o600
    s.close()


def test_write_is_atomic_on_error(tmp_path):
    s = Store(tmp_path / "m.db")
    s.write(lambda c: c.execute("CREATE TABLE t(x)"))

    def bad(c):
        c.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        s.write(bad)
    assert s.read_one("SELECT count(*) FROM t")[0] == 0


def test_busy_writer_retries_then_succeeds(tmp_path):
    """A second process-like connection holds the write lock briefly: our write waits it out."""
    p = tmp_path / "m.db"
    a, b = Store(p), Store(p)
    a.write(lambda c: c.execute("CREATE TABLE t(x)"))
    b.conn.execute("BEGIN IMMEDIATE")
    b.conn.execute("INSERT INTO t VALUES (1)")
    threading.Timer(0.4, lambda: b.conn.execute("COMMIT")).start()
    a.write(lambda c: c.execute("INSERT INTO t VALUES (2)"))
    assert sorted(r[0] for r in a.read("SELECT x FROM t")) == [1, 2]


def test_busy_writer_gives_up_with_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(store_mod, "WRITE_RETRIES", 3)
    monkeypatch.setattr(store_mod, "WRITE_TIMEOUT_S", 0.2)
    p = tmp_path / "m.db"
    a, b = Store(p), Store(p)
    a.write(lambda c: c.execute("CREATE TABLE t(x)"))
    b.conn.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreBusy, match="locked by other writers"):
            a.write(lambda c: c.execute("INSERT INTO t VALUES (2)"))
    finally:
        b.conn.execute("ROLLBACK")


def test_readers_do_not_block_writers(tmp_path):
    p = tmp_path / "m.db"
    w, r = Store(p), Store(p)
    w.write(lambda c: c.execute("CREATE TABLE t(x)"))
    with r.reading() as conn:  # an open read snapshot
        conn.execute("SELECT count(*) FROM t").fetchone()
        w.write(lambda c: c.execute("INSERT INTO t VALUES (1)"))
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0  # snapshot isolation
    assert r.read_one("SELECT count(*) FROM t")[0] == 1


def test_injectable_clock_stamps_rows(eng, clock):
    mid = eng.add_memory("clocked memory")
    assert eng.memories.get(mid).created_at == clock.now()
    clock.advance(3600)
    eng.memories.reinforce(mid)
    assert eng.memories.get(mid).last_reinforced_at == clock.now()


def test_not_a_database_is_a_clear_error(tmp_path):
    from engine import EngineError

    p = tmp_path / "junk.db"
    p.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(EngineError):
        open_engine(p, embedder=None)
