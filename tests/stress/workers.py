"""Worker processes for the concurrency and crash tests: `python -m tests.stress.workers ROLE ...`.

Every worker prints one line per acknowledged write *after* the engine call returned (so after
COMMIT), flushed at once to a file the parent reads — even after a kill -9. Workers use
HashEmbedder: the real MiniLM model in 8 processes would not fit 2 shared cores, and what is under
test is the storage path (locking, transactions, recovery), which is the same for any embedder.

Lines:  M <memory id> <sha1 of content>    memory added
        G <message id>                      message added
        I <memory id> <sha1> / E <memory id> <sha1>   edit intended / edit done
        J <memory id> <tier> / T <memory id> <tier>   tier change intended / done
        X <error type>: <message>           an error reached the caller (the test fails)
        R <n> <max ms> <p95 ms> <n> <max ms> <p95 ms>   searcher: read rounds, then access rounds
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
import time

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
    "deploy",
    "rollback",
    "cache",
    "index",
    "vector",
    "latency",
    "budget",
    "schema",
    "migration",
    "backup",
]


def sha(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class Out:
    """Acknowledgements, one os.write per line: nothing buffered in the process to lose."""

    def __init__(self) -> None:
        self.fd = sys.stdout.fileno()

    def __call__(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode("utf-8"))


def sentence(rng: random.Random, n: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _open(db: str, actor: str):
    from engine import HashEmbedder, open_engine

    return open_engine(db, embedder=HashEmbedder(), actor=actor, load="now")


def writer(db: str, wid: int, n: int) -> None:
    """n memories and n messages, one transaction each, as an agent process would."""
    out, rng = Out(), random.Random(wid)
    eng = _open(db, f"writer-{wid}")
    sid = eng.sessions.add(f"w{wid}", agent=f"w{wid}", title=f"writer {wid}")
    for i in range(n):
        text = f"writer {wid} note {i}: {sentence(rng)}"
        mid = eng.add_memory(text, agent=f"w{wid}", dedup=False)
        out(f"M {mid} {sha(text)}")
        msg = eng.sessions.add_message(sid, "assistant", f"writer {wid} says {i}: {sentence(rng)}")
        out(f"G {msg}")
    eng.close()


def searcher(db: str, stop_file: str) -> None:
    """What an operator's console does, until told to stop: rounds of pure reads (search without
    recording access, transcript search, counts, data_version) alternating with a search that
    records access (a write, so it queues behind the writers)."""
    out, rng = Out(), random.Random(99)
    eng = _open(db, "console")
    reads: list[float] = []
    writes: list[float] = []
    # A few rounds of each at least, even if the writers finished before this process started
    # (a loaded machine can start it late: "the searcher never searched" was a flaky failure).
    while not os.path.exists(stop_file) or len(reads) < 3 or len(writes) < 3:
        q = " ".join(rng.choice(WORDS) for _ in range(2))
        t0 = time.perf_counter()
        if len(reads) <= len(writes):
            eng.search(q, k=10, record_access=False)
            eng.sessions.search_messages(q, limit=20)
            eng.counts()
            eng.data_version()
            reads.append((time.perf_counter() - t0) * 1000)
        else:
            eng.search(q, k=10)
            writes.append((time.perf_counter() - t0) * 1000)
    out(f"R {_stats(reads)} {_stats(writes)}")
    eng.close()


def _stats(ms: list[float]) -> str:
    ms = sorted(ms)
    return f"{len(ms)} {max(ms, default=0):.1f} {ms[int(len(ms) * 0.95)] if ms else 0:.1f}"


def crasher(db: str, seed: int) -> None:
    """Mixed writes forever (the parent kills it): single adds, batches, messages, edits, tier
    changes and checkpoints, so a kill lands inside every kind of transaction."""
    out, rng = Out(), random.Random(seed)
    eng = _open(db, f"crasher-{seed}")
    sid = eng.sessions.add(None, agent="crash")
    known = [r[0] for r in eng.store.read("SELECT id FROM memories ORDER BY id DESC LIMIT 200")]
    out("READY")
    while True:
        op = rng.random()
        if op < 0.35:
            text = f"crash {seed} {sentence(rng)} {rng.random()}"
            mid = eng.add_memory(text, dedup=False)
            out(f"M {mid} {sha(text)}")
            known.append(mid)
        elif op < 0.5:
            texts = [f"batch {seed} {sentence(rng)} {rng.random()}" for _ in range(rng.randint(5, 40))]
            ids = eng.add_memories([{"content": t} for t in texts], dedup=False)
            for mid, t in zip(ids, texts, strict=True):
                out(f"M {mid} {sha(t)}")
            known.extend(ids)
        elif op < 0.7:
            ids = eng.sessions.add_messages(
                sid, [{"role": "user", "content": sentence(rng, 30)} for _ in range(rng.randint(1, 20))]
            )
            for i in ids:
                out(f"G {i}")
        elif op < 0.85 and known:
            mid, text = rng.choice(known), f"edited {seed} {sentence(rng)} {rng.random()}"
            out(f"I {mid} {sha(text)}")
            eng.memories.edit(mid, text)
            out(f"E {mid} {sha(text)}")
        elif op < 0.97 and known:
            mid, tier = rng.choice(known), rng.choice(("core", "active", "archived"))
            out(f"J {mid} {tier}")
            eng.memories.set_tier(mid, tier)
            out(f"T {mid} {tier}")
        else:
            eng.store.read_one("PRAGMA wal_checkpoint(PASSIVE)")


def main(argv: list[str]) -> int:
    role = argv[0]
    try:
        if role == "writer":
            writer(argv[1], int(argv[2]), int(argv[3]))
        elif role == "searcher":
            searcher(argv[1], argv[2])
        elif role == "crasher":
            crasher(argv[1], int(argv[2]))
        else:
            raise SystemExit(f"unknown role {role}")
    except Exception as exc:  # anything reaching the caller is a failure the parent reports
        Out()(f"X {type(exc).__name__}: {exc}".replace("\n", " "))
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
