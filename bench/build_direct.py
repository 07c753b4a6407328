"""Seed a very large synthetic database fast, for latency benchmarks at 1M memories.

Writing 1M memories through `add_memories` runs at ~250/s here (each row feeds two FTS indexes,
vec0, the change log and an audit row): over an hour. This writes the same memory and vec0 rows
in bulk with the per-row triggers dropped, then rebuilds the FTS indexes once; reopening the file
with the engine recreates the triggers (schema reconcile). It bypasses the audit trail, so it is
for benchmark files only, never for an operator's database.

    python bench/build_direct.py --n 1000000   # -> bench/out/latency/mem1000000.db
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from common import SyntheticCorpus, out_dir

from engine import FixedClock, open_engine
from engine.storage.sqlite.schema import NAMED

T0 = 1767225600.0  # 2026-01-01, the clock search_latency.py builds with


def build_direct(path: Path, n: int, step: int = 50_000) -> None:
    tmp = path.with_suffix(".building")
    for s in ("", "-wal", "-shm"):
        Path(str(tmp) + s).unlink(missing_ok=True)
    eng = open_engine(tmp, embedder=None, clock=FixedClock(T0), actor="bench")
    conn = eng.store.conn
    triggers = [t.name for t in NAMED if t.kind == "trigger"]
    for name in triggers:  # recreated by the next open
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    corpus = SyntheticCorpus()
    t0 = time.perf_counter()
    for start in range(0, n, step):
        m = min(step, n - start)
        items, vecs = corpus.items(start, m), corpus.vectors(start, m)
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO memories(id, content, kind, category, tier, agent, user, created_at,"
            " last_reinforced_at, updated_at, embedded) VALUES (?,?,?,?,?,?,'',?,?,?,1)",
            [
                (
                    start + i + 1,
                    it["content"],
                    it["kind"],
                    it["category"],
                    it["tier"],
                    it["agent"],
                    T0,
                    T0,
                    T0,
                )
                for i, it in enumerate(items)
            ],
        )
        conn.executemany(
            "INSERT INTO memories_vec(memory_id, embedding, tier, kind, category, agent, user)"
            " VALUES (?,?,?,?,?,?,'')",
            [
                (start + i + 1, vecs[i].tobytes(), it["tier"], it["kind"], it["category"], it["agent"])
                for i, it in enumerate(items)
            ],
        )
        conn.execute("COMMIT")
        print(f"  rows {start + m:,}/{n:,} ({time.perf_counter() - t0:.0f} s)", flush=True)
    for fts in ("memories_fts", "memories_tri"):
        t1 = time.perf_counter()
        conn.execute(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")
        print(f"  {fts} rebuilt ({time.perf_counter() - t1:.0f} s)", flush=True)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    eng.close()
    open_engine(tmp, embedder=None).close()  # reconcile: triggers back
    os.replace(tmp, path)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    args = ap.parse_args()
    target = out_dir("latency") / f"mem{args.n}.db"
    if target.exists():
        print(f"{target} exists")
    else:
        build_direct(target, args.n)
        print(f"built {target}")
