"""Helpers of the PgBouncer tests (tests/postgres/test_pg_bouncer*.py), and an agent process:
`python -m tests.postgres.bouncer_agents URL WID N THREADS` runs THREADS threads on one engine, each
alternating remember and recall N times; it prints `M id wid thread i` once a write returned and
`E ...` for any error that reached it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from engine import FixedClock, HashEmbedder, open_engine
from tests.pg_bouncer import PgBouncer

ROOT = Path(__file__).resolve().parents[2]
T0 = "2026-01-01T00:00:00Z"


def opened(url: str, actor: str = "tester", **kw):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor=actor, load="now", **kw)


def content(wid: int, t: int, i: int) -> str:
    return f"agent {wid} thread {t} noted item {i} about the pooled fleet, token b{wid}t{t}x{i}"


def until(cond, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return False


def together(*fns, gate: threading.Barrier | None = None) -> None:
    """Run `fns` in threads at once; re-raise the first one's failure (a broken barrier frees the
    others instead of leaving them waiting)."""
    failed: list[BaseException] = []

    def run(fn) -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            failed.append(exc)
            if gate is not None:
                gate.abort()

    workers = [threading.Thread(target=run, args=(fn,), daemon=True) for fn in fns]
    for w in workers:
        w.start()
    for w in workers:
        w.join(90)
    if failed:
        raise failed[0]
    assert not any(w.is_alive() for w in workers), "a thread did not finish in 90 s"


class Peak:
    """The most client and server connections the bouncer held for one database, sampled."""

    def __init__(self, bouncer: PgBouncer, database: str) -> None:
        self.bouncer, self.database = bouncer, database
        self.clients = self.servers = 0
        self.error = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                clients = sum(1 for r in self.bouncer.admin("SHOW CLIENTS") if r["database"] == self.database)
                self.clients = max(self.clients, clients)
                self.servers = max(self.servers, self.bouncer.server_connections(self.database))
                self._stop.wait(0.05)
        except Exception as exc:  # noqa: BLE001 - the test fails with it
            self.error = f"{type(exc).__name__}: {exc}"

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def spawn(url: str, wid: int, n: int, threads: int, out: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    with open(out, "wb") as fh:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.postgres.bouncer_agents", url, str(wid), str(n), str(threads)],
            cwd=ROOT,
            stdout=fh,
            stderr=subprocess.PIPE,
            env=env,
        )


def _agent(url: str, wid: int, n: int, threads: int) -> None:
    eng = opened(url, f"agent-{wid}")
    lock = threading.Lock()

    def say(line: str) -> None:
        with lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def run(t: int) -> None:
        for i in range(n):
            try:
                mid = eng.add_memory(content(wid, t, i), agent=f"agent-{wid}", dedup=True)
                say(f"M {mid} {wid} {t} {i}")
                hits = eng.search(f"b{wid}t{t}x{i}", k=3, agent=f"agent-{wid}").hits
                if mid not in [h.id for h in hits]:
                    say(f"E {wid} {t} {i} recall missed {mid}")
            except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails on any
                say(f"E {wid} {t} {i} {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")

    workers = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    eng.close()
    say("DONE")


if __name__ == "__main__":
    _agent(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
