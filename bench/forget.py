"""Forget on a big database: execute (delete, tombstones, redaction, FTS optimize) and verify
(checkpoint, distinctive targets, byte scan of db/-wal/-shm and reports), timed apart.

Seeds a copy of the synthetic N-memory file (bench/build_direct.py) with a case to forget: 50
memories and one 20-message session quoting a canary. Then times one forget
by query and one forget of a single memory by id.

    python bench/forget.py --n 100000
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from common import machine, out_dir

from engine import FixedClock, HashEmbedder, open_engine

T0 = 1767225600.0
CANARY = "Canary-Okapi-93be1f-Fjord"


def seed(eng) -> int:
    for i in range(50):
        eng.add_memory(f"Note {i}: the staging password {CANARY} rotates on day {i}", dedup=False)
    sid = eng.sessions.add(agent="bench", title="private")
    eng.sessions.add_messages(
        sid, [{"role": "user", "content": f"turn {i} mentions {CANARY}"} for i in range(20)]
    )
    return eng.add_memory("The release train leaves every second Tuesday at noon", dedup=False)


def timed(eng, scope: str, value) -> tuple[float, float, int]:
    pv = eng.forget.run(scope, value, "bench", preview=True)
    t = time.perf_counter()
    eng.forget.execute(pv.request.id, verify=False)
    t_exec = time.perf_counter() - t
    t = time.perf_counter()
    ver = eng.forget.verify(pv.request.id)
    return t_exec, time.perf_counter() - t, ver.residue


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    src = out_dir("latency") / f"mem{args.n}.db"
    if not src.exists():
        from build_direct import build_direct

        build_direct(src, args.n)
    rows = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "memory.db"
            shutil.copyfile(src, db)  # no connection is open in this process yet
            eng = open_engine(db, embedder=HashEmbedder(), clock=FixedClock(T0), actor="bench")
            one = seed(eng)
            q = timed(eng, "query", CANARY)
            m = timed(eng, "memory", [one])
            size = db.stat().st_size
            eng.close()
            rows.append((q, m, size))
    print(machine())
    print(f"{args.n:,} memories, {rows[0][2] / 1e6:.0f} MB")
    for name, i in (("query (50 memories + 20 messages)", 0), ("one memory by id", 1)):
        ex = sorted(r[i][0] for r in rows)
        ve = sorted(r[i][1] for r in rows)
        print(
            f"  {name}: execute {ex[len(ex) // 2]:.2f} s, verify {ve[len(ve) // 2]:.2f} s "
            f"(median of {len(rows)}; residue {rows[-1][i][2]})"
        )


if __name__ == "__main__":
    main()
