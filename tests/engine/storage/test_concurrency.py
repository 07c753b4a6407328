"""Many processes on one file, small version (the full one, 8 writers x 500, is
tests/stress/test_concurrency_stress.py).

Writer processes add memories and messages, one transaction each, while another process searches
like a console would. Every acknowledged write must be present, no "database is locked" (or any
other error) may reach a caller, and the file must pass integrity checks afterwards. Writers use
HashEmbedder: the real model loaded in several processes would not fit the 2 shared cores, and
locking and transactions are the same for any embedder."""

from __future__ import annotations

import time

from tests.stress.harness import Acks, check_database, read_acks, spawn


def run_load(tmp_path, writers: int, per_writer: int) -> tuple[Acks, dict]:
    db = tmp_path / "shared.db"  # not created yet: the writers race to create it too
    stop = tmp_path / "stop"
    procs = [
        (spawn(["writer", str(db), str(w), str(per_writer)], tmp_path / f"w{w}.txt"), tmp_path / f"w{w}.txt")
        for w in range(writers)
    ]
    time.sleep(0.5)
    search = (spawn(["searcher", str(db), str(stop)], tmp_path / "search.txt"), tmp_path / "search.txt")
    acks, stderr = Acks(), []
    for p, out in procs:
        p.wait()
        stderr.append(p.stderr.read().decode())
        acks.merge(read_acks(out))
        assert p.returncode == 0, (p.returncode, stderr[-1][-2000:], read_acks(out).errors)
    stop.touch()
    p, out = search
    p.wait()
    stderr.append(p.stderr.read().decode())
    searched = read_acks(out)
    assert p.returncode == 0, (stderr[-1][-2000:], searched.errors)
    acks.merge(searched)
    assert not acks.errors, acks.errors
    assert not any("locked" in s.lower() for s in stderr), stderr
    assert len(acks.memories) == writers * per_writer
    assert len(acks.messages) == writers * per_writer
    counts = check_database(db, acks)
    assert counts["memories"] == writers * per_writer
    return acks, counts


def test_writers_and_a_searcher_share_the_file(tmp_path):
    acks, counts = run_load(tmp_path, writers=3, per_writer=40)
    assert acks.summary and int(acks.summary[0].split()[0]) > 0, "the searcher never searched"


def _exclusive(db):
    """Another process's exclusive hold on the file, as during WAL recovery after a crash."""
    import sqlean

    b = sqlean.connect(str(db), isolation_level=None, check_same_thread=False)
    b.execute("PRAGMA locking_mode=EXCLUSIVE")
    b.execute("BEGIN EXCLUSIVE")
    b.execute("COMMIT")  # exclusive locking mode keeps the lock after the commit
    return b


def test_open_and_reads_wait_out_a_short_exclusive_lock(tmp_path):
    import threading

    from engine import HashEmbedder, open_engine

    db = tmp_path / "m.db"
    with open_engine(db, embedder=HashEmbedder()) as e:
        mid = e.add_memory("hello world")
    holder = _exclusive(db)
    released = threading.Event()

    def release():
        time.sleep(0.5)
        holder.close()
        released.set()

    threading.Thread(target=release).start()
    with open_engine(db, embedder=HashEmbedder()) as e:  # would be "database is locked"
        assert released.is_set()
        assert e.memories.get(mid).content == "hello world"


def test_a_lock_that_never_ends_is_store_busy_not_a_raw_error(tmp_path, monkeypatch):
    import pytest

    from engine import HashEmbedder, StoreBusy, open_engine
    from engine.storage.sqlite import store

    db = tmp_path / "m.db"
    with open_engine(db, embedder=HashEmbedder()):
        pass
    holder = _exclusive(db)
    monkeypatch.setattr(store, "READ_TIMEOUT_S", 0.3)
    monkeypatch.setattr(store, "WRITE_TIMEOUT_S", 0.3)
    monkeypatch.setattr(store, "WRITE_RETRIES", 2)
    try:
        with pytest.raises(StoreBusy, match="locked"):
            open_engine(db, embedder=HashEmbedder())
    finally:
        holder.close()


def test_readers_never_wait_for_a_writer_and_writers_queue(tmp_path, monkeypatch):
    import threading

    import pytest

    from engine import HashEmbedder, StoreBusy, open_engine
    from engine.storage.sqlite import store

    db = tmp_path / "m.db"
    a = open_engine(db, embedder=HashEmbedder(), actor="a")
    b = open_engine(db, embedder=HashEmbedder(), actor="b")
    mid = a.add_memory("the deploy runs on fridays")
    b.store.conn.execute("BEGIN IMMEDIATE")  # b holds the write lock
    released = threading.Event()
    try:
        assert [h.id for h in a.search("deploy", record_access=False).hits] == [mid]
        assert a.memories.get(mid) and not released.is_set()  # read while the lock is held

        def release():
            time.sleep(0.4)
            released.set()
            b.store.conn.execute("COMMIT")

        threading.Thread(target=release).start()
        second = a.add_memory("backups are verified nightly")  # queues, then commits
        assert released.is_set() and a.memories.get(second)
        b.store.conn.execute("BEGIN IMMEDIATE")
        monkeypatch.setattr(store, "WRITE_TIMEOUT_S", 0.2)
        monkeypatch.setattr(store, "WRITE_RETRIES", 2)
        with pytest.raises(StoreBusy):
            a.add_memory("never gets the lock")
    finally:
        if b.store.conn.in_transaction:
            b.store.conn.execute("ROLLBACK")
        a.close()
        b.close()
