"""Running worker processes and checking a database afterwards; shared by the small versions in
tests/engine and the full ones in tests/stress."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.storage.sqlite.health import FTS_TABLES

ROOT = Path(__file__).resolve().parents[2]
FTS = tuple(name for name, _ in FTS_TABLES)


def spawn(args: list[str], out_path: Path) -> subprocess.Popen:
    """Start `python -m tests.stress.workers ARGS`, its acknowledgements going to `out_path`."""
    out = open(out_path, "wb")  # noqa: SIM115 - the child writes to it after we return; closed by the caller
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen(
        [sys.executable, "-m", "tests.stress.workers", *args],
        cwd=ROOT,
        stdout=out,
        stderr=subprocess.PIPE,
        env=env,
    )
    out.close()
    return p


@dataclass
class Acks:
    """What a worker acknowledged, read from its output file."""

    memories: dict[int, set[str]] = field(default_factory=dict)  # id -> acceptable content sha1s
    tiers: dict[int, set[str]] = field(default_factory=dict)  # id -> acceptable tiers
    messages: set[int] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    ready: bool = False
    in_flight: set = field(default_factory=set)  # ("m"|"t", id): an intent not acknowledged

    def merge(self, other: Acks) -> None:
        """Add a later run's acks. An unacknowledged intent there may not have committed, so
        the state known from earlier runs stays acceptable too."""
        for mine, theirs, tag in ((self.memories, other.memories, "m"), (self.tiers, other.tiers, "t")):
            for i, ok in theirs.items():
                mine[i] = (mine.get(i, set()) | ok) if (tag, i) in other.in_flight else ok
        self.in_flight = other.in_flight
        self.messages |= other.messages
        self.errors += other.errors
        self.summary += other.summary


def read_acks(path: Path) -> Acks:
    """Parse complete lines only (a kill can cut the last one). An intent (I/J) without its
    acknowledgement may or may not have committed, so both states are acceptable."""
    a = Acks()
    data = path.read_bytes().decode("utf-8", "replace")
    lines = data.split("\n")[:-1]
    for line in lines:
        tag, _, rest = line.partition(" ")
        parts = rest.split()
        if tag == "READY":
            a.ready = True
        elif tag == "M":
            a.memories[int(parts[0])] = {parts[1]}
        elif tag == "G":
            a.messages.add(int(parts[0]))
        elif tag == "I":
            a.memories.setdefault(int(parts[0]), set()).add(parts[1])
            a.in_flight.add(("m", int(parts[0])))
        elif tag == "E":
            a.memories[int(parts[0])] = {parts[1]}
            a.in_flight.discard(("m", int(parts[0])))
        elif tag == "J":  # memories are born active; earlier runs' tiers come in by merge()
            a.tiers.setdefault(int(parts[0]), {"active"}).add(parts[1])
            a.in_flight.add(("t", int(parts[0])))
        elif tag == "T":
            a.tiers[int(parts[0])] = {parts[1]}
            a.in_flight.discard(("t", int(parts[0])))
        elif tag == "X":
            a.errors.append(rest)
        elif tag == "R":
            a.summary.append(rest)
    return a


def wait_ready(path: Path, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().startswith(b"READY\n"):
            return
        if proc.poll() is not None:
            raise AssertionError(f"worker exited early: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.02)
    raise AssertionError("worker never became ready")


def kill_at_random(db: Path, out_path: Path, seed: int, max_delay: float = 1.5) -> Acks:
    """Start a crasher, SIGKILL it after a random delay, return what it acknowledged."""
    p = spawn(["crasher", str(db), str(seed)], out_path)
    try:
        wait_ready(out_path, p)
        time.sleep(random.Random(seed).uniform(0.02, max_delay))
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stderr.close()
    return read_acks(out_path)


def check_database(db: Path, acks: Acks) -> dict:
    """Everything the issue asks after load or a crash. Raises AssertionError naming the fault;
    returns a few counts."""
    from engine import HashEmbedder, open_engine
    from engine.storage.sqlite.store import connect

    conn = connect(db)  # opening runs WAL recovery, like any next process would
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall()[0][0] == "ok"
        for t in FTS:
            conn.execute(f"INSERT INTO {t}({t}, rank) VALUES ('integrity-check', 1)")
        mem = {
            r[0]: (r[1], r[2], r[3]) for r in conn.execute("SELECT id, content, tier, embedded FROM memories")
        }
        fts_ids = {r[0] for r in conn.execute("SELECT id FROM memories_fts_docsize")}
        tri_ids = {r[0] for r in conn.execute("SELECT id FROM memories_tri_docsize")}
        vecs = {r[0]: r[1] for r in conn.execute("SELECT memory_id, embedding FROM memories_vec")}
        assert set(mem) == fts_ids == tri_ids, "memories and FTS disagree on ids"
        embedded = {i for i, (_, _, e) in mem.items() if e}
        assert embedded <= set(vecs) <= set(mem), "memories and vec0 disagree on ids"
        # The writers embed with HashEmbedder, so every stored vector can be checked against the
        # content it claims to represent (a vector of an old text after an edit would show here).
        hasher = HashEmbedder()
        ids = sorted(embedded)
        for start in range(0, len(ids), 512):
            chunk = ids[start : start + 512]
            want = hasher.embed([mem[i][0] for i in chunk])
            got = np.stack([np.frombuffer(vecs[i], dtype=np.float32) for i in chunk])
            bad = [chunk[j] for j in np.nonzero(~np.isclose(want, got, atol=1e-5).all(axis=1))[0]]
            assert not bad, f"vectors that do not match their memory's content: {bad[:10]}"
        from tests.stress.workers import sha

        lost = [i for i in acks.memories if i not in mem]
        assert not lost, f"acknowledged memories missing: {lost[:10]}"
        wrong = [i for i, ok in acks.memories.items() if sha(mem[i][0]) not in ok]
        assert not wrong, f"acknowledged content not what was written: {wrong[:10]}"
        wrong = [i for i, ok in acks.tiers.items() if mem[i][1] not in ok]
        assert not wrong, f"acknowledged tier changes missing: {wrong[:10]}"
        msgs = {r[0] for r in conn.execute("SELECT id FROM messages")}
        lost = sorted(acks.messages - msgs)
        assert not lost, f"acknowledged messages missing: {lost[:10]}"
    finally:
        conn.close()
    with open_engine(db, embedder=None, actor="checker") as eng:
        report = eng.health.doctor()
        assert report.ok, [(c.name, c.detail) for c in report.problems]
        return dict(report.counts)
