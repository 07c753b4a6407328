"""Curator: an incremental run after 1,000 new memories in a 100,000-memory database (target ≤ 10 s),
against the plain approach (a vec0 KNN query per new memory).

Scenario: 100,000 memories of four agents with 384-d unit vectors (synthetic: the model cannot
embed 100k texts on this machine in a benchmark's time; the curator only reads stored vectors),
500 near-duplicate pairs among them. A first (full) run sets the watermark. Then 1,000 memories are
added through the engine's API, 100 of them near-duplicates of old ones, and the curator runs again.
Timed: the incremental run end to end (scan, dedup, proposals, audit rows, run.json + REPORT.md).
The plain approach (a k=10 vec0 KNN per new memory, filtered to its agent) is timed on 100 of the
1,000 and scaled.

    .venv/bin/python bench/curator_incremental.py [--n 100000] [--new 1000]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine, write_section  # noqa: E402
from engine import FixedClock, open_engine  # noqa: E402
from engine.retrieval.filters import Filters  # noqa: E402
from engine.retrieval.vectors import blob  # noqa: E402

AGENTS = ("atlas", "scout", "juno", "orion")
DIM = 384
T0 = "2026-03-01T00:00:00Z"


def unit(rng, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def near(rng, v: np.ndarray, noise: float = 0.02) -> np.ndarray:
    w = v + noise * rng.standard_normal(v.shape).astype(np.float32)
    return w / np.linalg.norm(w, axis=-1, keepdims=True)


class TableEmbedder:
    """Vectors looked up by text (prepared by the benchmark)."""

    name, dim = "table", DIM

    def __init__(self, table: dict) -> None:
        self.table = table

    def embed(self, texts):
        return np.stack([self.table[t] for t in texts]) if texts else np.zeros((0, DIM), np.float32)


def seed(path: Path, n: int, rng) -> np.ndarray:
    eng = open_engine(path, embedder=None, clock=FixedClock(T0), actor="bench")
    now = eng.clock.now()
    vecs = unit(rng, n)
    for i in range(500):  # 500 near-duplicate pairs
        a = 2 * i * 97 % (n - 4)
        b = a + 4  # same agent (agents go round by id)
        vecs[b] = near(rng, vecs[a])
    c = eng.store.conn
    c.execute("BEGIN")
    c.executemany(
        "INSERT INTO memories(id, content, agent, created_at, last_reinforced_at, embedded, updated_at)"
        " VALUES (?,?,?,?,?,1,?)",
        (
            (
                i + 1,
                f"memory {i} of agent {AGENTS[i % 4]}: note number {i * 7919 % 100003}",
                AGENTS[i % 4],
                now,
                now,
                now,
            )
            for i in range(n)
        ),
    )
    c.executemany(
        "INSERT INTO memories_vec(memory_id, embedding, tier, kind, category, agent, user)"
        " VALUES (?,?,'active','semantic','general',?,'')",
        ((i + 1, blob(vecs[i]), AGENTS[i % 4]) for i in range(n)),
    )
    c.execute("COMMIT")
    eng.close()
    return vecs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--new", type=int, default=1_000)
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    work = Path(tempfile.mkdtemp(prefix="curator-bench-"))
    db = work / "memory.db"
    try:
        t = time.perf_counter()
        vecs = seed(db, args.n, rng)
        seed_s = time.perf_counter() - t
        clock = FixedClock(T0)
        eng = open_engine(db, embedder=None, clock=clock, actor="bench")
        t = time.perf_counter()
        first = eng.curator.run(use_model=False)
        full_s = time.perf_counter() - t
        eng.close()

        # 1,000 new memories through the engine's own write path; 10% near-duplicates of old ones.
        texts, table = [], {}
        new_vecs = unit(rng, args.new)
        for j in range(args.new):
            old = (j * 131) % args.n
            v = near(rng, vecs[old]) if j % 10 == 0 else new_vecs[j]
            agent = AGENTS[old % 4] if j % 10 == 0 else AGENTS[j % 4]
            text = f"new memory {j} for {agent}"
            table[text] = v
            texts.append({"content": text, "agent": agent})
        clock.advance(3600)
        eng = open_engine(db, embedder=TableEmbedder(table), clock=clock, actor="bench")
        eng.add_memories(texts, dedup=False)
        clock.advance(60)
        t = time.perf_counter()
        inc = eng.curator.run(use_model=False)
        inc_s = time.perf_counter() - t

        # Plain approach: one vec0 KNN per new memory (agent-filtered), timed on a sample.
        sample = 100
        new_ids = [
            r[0] for r in eng.store.read("SELECT id FROM memories ORDER BY id DESC LIMIT ?", (sample,))
        ]
        t = time.perf_counter()
        for mid in new_ids:
            v = eng.vectors.vector_of(mid)
            agent = eng.store.read_one("SELECT agent FROM memories WHERE id = ?", (mid,))[0]
            eng.vectors.knn(v, 10, Filters(agent=agent))
        knn_each = (time.perf_counter() - t) / sample
        # And a forget in the same database: delete, FTS optimize, checkpoint, byte-scan every file.
        t = time.perf_counter()
        gone = eng.forget.run("memory", [new_ids[0]], "bench")
        forget_s = time.perf_counter() - t
        db_mb = db.stat().st_size / 1e6
        eng.close()
        plain_s = knn_each * args.new
        merges = inc.counts["proposed"]["merge"] + inc.counts["updated"]
        body = f"""## Curator: incremental run after {args.new:,} new memories in {args.n:,}

`bench/curator_incremental.py` · {machine()}

Synthetic 384-d unit vectors (the curator only reads stored vectors; the model cannot embed 100k
texts here in a benchmark's time), four agents, 500 near-duplicate pairs; the {args.new:,} new
memories are written through `add_memories`, 10% of them near-duplicates of old ones.

| step | time |
|---|---|
| seed {args.n:,} memories + vectors (direct SQL) | {seed_s:.1f} s |
| first, full run (every pair once, blocked matrix products) | {full_s:.1f} s ({first.counts["proposed"]["merge"]} merge proposals) |
| **incremental run** (watermark: {inc.counts["compared"]:,} new compared with {inc.counts["vectors"]:,}) | **{inc_s:.2f} s** (target ≤ 10 s) |
| of which: load vectors + compare | {inc.timings["merge_memories"]:.2f} s |
| plain approach: a vec0 KNN per new memory (k=10, agent filter; {sample} timed, scaled) | {plain_s:.1f} s ({knn_each * 1000:.0f} ms each) |
| forget one memory in it (delete, FTS optimize, WAL truncate, byte scan of {db_mb:.0f} MB + reports) | {forget_s:.1f} s ({gone.status}, residue {gone.residue}) |

The incremental run found {merges} merge clusters among the new memories ({args.new // 10} planted) and is
{plain_s / inc_s:.0f}× faster than the per-memory KNN. Its cost is one read of the stored vectors
(straight from vec0's chunk tables, checked against vec0; ~5 s row by row through the virtual
table) plus {args.new:,} × N dot products per agent in blocks of 256 rows: it grows with the table,
not with its square. Measured while other jobs shared the 2 cores.
"""
        write_section("curator_incremental", body)
        print(body)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
