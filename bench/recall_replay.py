"""Replaying a logged recall at 100,000 memories (issue #26 goal: p95 ≤ 100 ms): `recalls.replay`
is the logged search run again plus the diff's reads. Two states, measured apart:

- console: a long-lived engine (the console, `memconsole serve`) holding its vector and keyword
  matrices in memory, as the console does once the model is ready (app.py `keep_in_memory`);
- cold: the first replay in a freshly opened engine (`memconsole recall replay ID` in a new
  process): the store's own exact KNN and FTS5 reads, no matrix.

    python bench/recall_replay.py [--n 100000] [--replays 200] [--cold 5] [--write]
    python bench/recall_replay.py --cli 9 [--tree CHECKOUT]   # cold `memconsole recall replay` CPU
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from build_direct import T0, build_direct
from common import ROOT, machine, out_dir, pct, write_section

from engine import FixedClock, HashEmbedder, open_engine

QUERIES = [
    "deploy pipeline", "billing invoice", "review the api", "ops incident", "support ticket",
    "database migration", "release notes", "on call rotation", "customer refund", "latency budget",
]  # fmt: skip


def opened(path: Path):
    return open_engine(path, embedder=HashEmbedder(), clock=FixedClock(T0), actor="bench")


def logged(path: Path) -> list[int]:
    """One logged agent recall per query (the log's newest rows)."""
    eng = opened(path)
    try:
        for q in QUERIES:
            eng.search(q, k=10, door="mcp", for_agent="coder")
        return [r.id for r in eng.recalls.list(limit=len(QUERIES))]
    finally:
        eng.close()


def console(path: Path, ids: list[int], replays: int) -> tuple[list[float], float]:
    eng = opened(path)
    try:
        t0 = time.perf_counter()
        eng.vectors.keep_in_memory()  # what the console starts once the model is ready
        eng.retrieval.keyword.keep_in_memory()  # what the 3rd keyword search starts
        load = time.perf_counter() - t0
        took = []
        for i in range(replays):
            t0 = time.perf_counter()
            eng.recalls.replay(ids[i % len(ids)])
            took.append(time.perf_counter() - t0)
        return took, load
    finally:
        eng.close()


def cold(path: Path, ids: list[int], times: int) -> list[float]:
    """The first replay in a freshly opened engine, the OS page cache dropped of nothing (the file
    stays cached between runs: this is the CLI's cost, not a cold disk's)."""
    took = []
    for i in range(times):
        eng = opened(path)
        try:
            t0 = time.perf_counter()
            eng.recalls.replay(ids[i % len(ids)])
            took.append(time.perf_counter() - t0)
        finally:
            eng.close()
    return took


def cli(path: Path, rid: int, times: int, tree: Path) -> tuple[list[float], list[float]]:
    """`memconsole recall replay ID --json` as the operator runs it: a new process each time,
    the code of `tree` (compare two checkouts), the default embedder (numpy MiniLM, as the CLI
    opens it). Returns (process CPU s: user + sys, wall s): CPU moves far less with the machine's
    load than wall time does."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    cpu, wall = [], []
    for _ in range(times + 1):  # the first run writes bytecode: not counted
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        args = [
            sys.executable,
            "-m",
            "console.cli",
            "--db",
            str(path),
            "recall",
            "replay",
            str(rid),
            "--json",
        ]
        subprocess.run(args, env=env, capture_output=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall.append(time.perf_counter() - t0)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return cpu[1:], wall[1:]


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--db", type=Path, default=None, help="a build_direct file (default bench/out/latency)")
    ap.add_argument("--replays", type=int, default=200)
    ap.add_argument("--cold", type=int, default=5)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--cli", type=int, default=0, help="also time N cold `memconsole recall replay` runs")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose CLI --cli runs")
    args = ap.parse_args()
    if args.cli:  # the CLI alone, on a small store (its cost is the process's, not the store's)
        small = out_dir("recall_replay") / "cli.db"
        if not small.exists():
            with open_engine(small, clock=FixedClock(T0), actor="bench", load="now") as eng:
                eng.add_memories([{"content": f"the kettle in room {i} needs descaling"} for i in range(300)])
                eng.search("kettle room 3", k=10, door="mcp", for_agent="coder")
        with opened(small) as eng:
            rid = eng.recalls.list(limit=1)[0].id
        cpu, wall = cli(small, rid, args.cli, args.tree)
        print(
            f"cold CLI replay ({args.tree}): CPU p50 {pct(cpu, 50) * 1000:.0f} ms"
            f" (min {min(cpu) * 1000:.0f}),"
            f" wall p50 {pct(wall, 50):.2f} s, n={len(cpu)}; {load()}"
        )
        return
    path = args.db or out_dir("latency") / f"mem{args.n}.db"
    if not path.exists():
        build_direct(path, args.n)
    ids = logged(path)
    warm, load_s = console(path, ids, args.replays)
    first = cold(path, ids, args.cold)

    def row(what: str, xs: list[float]) -> str:
        return f"| {what} | {len(xs)} | {pct(xs, 50) * 1000:.1f} ms | {pct(xs, 95) * 1000:.1f} ms |"

    body = f"""## Replay of a logged recall at {args.n:,} memories (`bench/recall_replay.py`)

{machine()}; `uptime` at the end: {load()} (a shared machine: other work runs beside it).
build_direct file, SQLite, HashEmbedder, hybrid, k 10, {len(ids)} logged recalls replayed in turn.

| state | replays | p50 | p95 |
|---|---|---|---|
{row("console: matrices in memory (loaded once, " + f"{load_s:.1f} s)", warm)}
{row("cold: first replay in a freshly opened engine (CLI)", first)}

Goal (issue #26): replay ≤ 100 ms p95 at 100k — in the console, where replay is a key (`r`, pane 8).
"""
    print(body)
    if args.write:
        write_section("recall_replay", body)


if __name__ == "__main__":
    main()
