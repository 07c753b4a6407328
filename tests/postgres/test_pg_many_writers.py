"""Many writer processes on one PostgreSQL database (the small version; tests/stress/
test_pg_stress.py runs 8 x 500): nothing acknowledged is lost, callers never see a serialization
or lock error, and a writer killed with SIGKILL mid-write leaves every acknowledged write present
and the keyword and vector indexes consistent with the rows.

Run as a module, this file is the writer: `python -m tests.postgres.test_pg_many_writers URL WID N`
adds N memories one call at a time and prints `I wid i` before each call and `M id wid i` once it
returned (flushed at once, so a kill leaves complete lines for what was acknowledged)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.direct_sql import direct

ROOT = Path(__file__).resolve().parents[2]
T0 = "2026-01-01T00:00:00Z"


def content(wid: int, i: int) -> str:
    # A token of its own (w3x17) finds exactly this memory by keyword.
    return f"writer {wid} wrote memory {i} about shared fleets, token w{wid}x{i}"


def spawn(url: str, wid: int, n: int, out: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    with open(out, "wb") as fh:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.postgres.test_pg_many_writers", url, str(wid), str(n)],
            cwd=ROOT,
            stdout=fh,
            stderr=subprocess.PIPE,
            env=env,
        )


@dataclass
class Acks:
    memories: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (wid, i)
    errors: list[str] = field(default_factory=list)
    done: bool = False


def read_acks(path: Path) -> Acks:
    a = Acks()
    for line in path.read_bytes().decode("utf-8", "replace").split("\n")[:-1]:  # complete lines only
        tag, *rest = line.split()
        if tag == "M":
            a.memories[int(rest[0])] = (int(rest[1]), int(rest[2]))
        elif tag == "E":
            a.errors.append(line)
        elif tag == "DONE":
            a.done = True
    return a


def wait_for_acks(path: Path, at_least: int, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if len(read_acks(path).memories) >= at_least:
            return
        time.sleep(0.02)
    raise AssertionError(f"{path.name}: fewer than {at_least} acknowledgements in {timeout} s")


def check_database(url: str, acks: list[Acks]) -> dict[str, int]:
    """Every acknowledged memory is there with its text; the keyword index (fts_docs, fts_terms)
    and the vectors agree with the rows; each acknowledged memory is found by its own token."""
    from engine import FixedClock, HashEmbedder, open_engine
    from engine.storage.lexemes import counted

    eng = open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now")
    try:
        rows = {int(r[0]): r[1] for r in direct(eng.store).all("SELECT id, content FROM memories")}
        acked = {mid: wi for a in acks for mid, wi in a.memories.items()}
        missing = [mid for mid in acked if mid not in rows]
        assert not missing, f"acknowledged but absent: {missing[:10]}"
        for mid, (wid, i) in acked.items():
            assert rows[mid] == content(wid, i), mid
        docs = {
            int(r[0]): int(r[1])
            for r in direct(eng.store).all("SELECT doc_id, len FROM fts_docs WHERE src = 'memories'")
        }
        assert set(docs) == set(rows), "fts_docs and memories disagree"
        terms: dict[int, Counter[str]] = {}
        for doc, term, tf in direct(eng.store).all(
            "SELECT doc_id, term, tf FROM fts_terms WHERE src = 'memories'"
        ):
            terms.setdefault(int(doc), Counter())[term] = int(tf)
        for mid, text in rows.items():
            want, length = counted(text)
            assert terms.get(mid) == want and docs[mid] == length, mid
        assert direct(eng.store).one("SELECT count(*) FROM fts_pending")[0] == 0
        embedded = {int(r[0]) for r in direct(eng.store).all("SELECT id FROM memories WHERE embedded = 1")}
        vectors = {int(r[0]) for r in direct(eng.store).all("SELECT memory_id FROM memory_vectors")}
        assert embedded == vectors == set(rows), "vectors and memories disagree"
        for mid, (wid, i) in list(acked.items())[:: max(1, len(acked) // 40)]:
            hits = eng.search(f"w{wid}x{i}", mode="keyword", record_access=False).hits
            assert [h.id for h in hits] == [mid], (mid, [h.id for h in hits])
        return {"rows": len(rows), "acknowledged": len(acked)}
    finally:
        eng.close()


def run_writers(
    url: str, tmp: Path, writers: int, n: int, kill: int = 0, kill_after: int = 10, wid0: int = 0
) -> list[Acks]:
    """`writers` processes (ids from `wid0`) adding `n` memories each; the first `kill` of them
    SIGKILLed once they acknowledged `kill_after` (never restarted). Returns every writer's acks."""
    procs = [spawn(url, wid0 + w, n, tmp / f"w{w}.txt") for w in range(writers)]
    for w in range(kill):
        wait_for_acks(tmp / f"w{w}.txt", kill_after)
        procs[w].send_signal(signal.SIGKILL)
    for w, p in enumerate(procs):
        _, err = p.communicate(timeout=900)
        if w >= kill:
            assert p.returncode == 0, err.decode()[-2000:]
    acks = [read_acks(tmp / f"w{w}.txt") for w in range(writers)]
    assert [e for a in acks for e in a.errors] == []  # no serialization/lock error reached a caller
    for w, a in enumerate(acks):
        assert a.done == (w >= kill)
        if w >= kill:
            assert len(a.memories) == n
    return acks


def test_three_writers_and_one_killed_mid_write_lose_nothing_acknowledged(pg_url, tmp_path):
    from engine import FixedClock, HashEmbedder, open_engine

    open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now").close()  # schema first
    acks = run_writers(pg_url, tmp_path, writers=4, n=50, kill=1, kill_after=10)
    got = check_database(pg_url, acks)
    assert got["acknowledged"] >= 3 * 50 + 10
    assert got["rows"] - got["acknowledged"] <= 1  # at most the killed writer's unacknowledged last write


def _writer(url: str, wid: int, n: int) -> None:
    from engine import FixedClock, HashEmbedder, open_engine

    out = sys.stdout
    eng = open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor=f"writer-{wid}", load="now")
    for i in range(n):
        out.write(f"I {wid} {i}\n")
        out.flush()
        try:
            mid = eng.add_memory(content(wid, i), dedup=False)
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails on any
            out.write(f"E {wid} {i} {type(exc).__name__}: {' '.join(str(exc).split())[:200]}\n")
            out.flush()
            continue
        out.write(f"M {mid} {wid} {i}\n")
        out.flush()
    eng.close()
    out.write("DONE\n")
    out.flush()


if __name__ == "__main__":
    _writer(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
