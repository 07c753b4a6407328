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
    db = tmp_path / "shared.db"          # not created yet: the writers race to create it too
    stop = tmp_path / "stop"
    procs = [(spawn(["writer", str(db), str(w), str(per_writer)], tmp_path / f"w{w}.txt"),
              tmp_path / f"w{w}.txt") for w in range(writers)]
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
