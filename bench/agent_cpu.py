"""Python CPU per agent call (issue #24): one agent's `remember` (add_memory, dedup on) and
`recall` (search recording access, as bench/fleet.py's agents do) on a seeded store, PostgreSQL
and SQLite side by side, hash embedder. Reports this process's CPU (time.process_time: user +
system of every thread here, so also the store's listener/poller threads) and wall time per call,
median and mean over --calls pairs, with the date and `uptime` load (2 shared cores: the load
matters). `--profile FILE` writes a cProfile of the measured loop per backend (FILE.<backend>).

    python bench/agent_cpu.py                       # 2000 seeded, 300 pairs, both backends
    python bench/agent_cpu.py --calls 500 --backends postgres --profile /tmp/agent
"""

from __future__ import annotations

import argparse
import cProfile
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fleet import SEED, WORDS, _text  # noqa: E402 - the fleet's agent workload, one agent

from engine import HashEmbedder, open_engine  # noqa: E402


def seed(url: str) -> None:
    eng = open_engine(url, embedder=HashEmbedder(), actor="seeder", load="now")
    rng = random.Random(7)
    items = [
        {"content": _text(rng, f"agent-{i % 16:02d}", i), "agent": f"agent-{i % 16:02d}"} for i in range(SEED)
    ]
    eng.add_memories(items, dedup=False)
    eng.close()


def run(url: str, calls: int, profile: str | None) -> dict[str, Any]:
    name = "agent-01"
    eng = open_engine(url, embedder=HashEmbedder(), actor=name, load="now")
    rng = random.Random(name)
    for i in range(20):  # warm: first-use reads, matrices, the embedder handle
        eng.add_memory(_text(rng, name, -i - 1), agent=name, dedup=True)
        eng.search(" ".join(rng.choice(WORDS) for _ in range(3)), k=5, agent=name)
    cpu: dict[str, list[float]] = {"remember": [], "recall": []}
    wall: dict[str, list[float]] = {"remember": [], "recall": []}
    prof = cProfile.Profile(time.process_time) if profile else None  # CPU, not waits
    if prof:
        prof.enable()
    for i in range(1, calls + 1):
        c, w = time.process_time(), time.perf_counter()
        eng.add_memory(_text(rng, name, i), agent=name, dedup=True)
        c2, w2 = time.process_time(), time.perf_counter()
        q = " ".join(rng.choice(WORDS) for _ in range(3))
        eng.search(q, k=5, agent=name if i % 2 else None)
        c3, w3 = time.process_time(), time.perf_counter()
        cpu["remember"].append(c2 - c)
        cpu["recall"].append(c3 - c2)
        wall["remember"].append(w2 - w)
        wall["recall"].append(w3 - w2)
    if prof:
        prof.disable()
        prof.dump_stats(profile)
    eng.close()
    out: dict[str, Any] = {}
    for op in ("remember", "recall"):
        out[f"{op}_cpu_med"] = 1000 * statistics.median(cpu[op])
        out[f"{op}_cpu_mean"] = 1000 * statistics.fmean(cpu[op])
        out[f"{op}_wall_med"] = 1000 * statistics.median(wall[op])
    out["pair_cpu_mean"] = out["remember_cpu_mean"] + out["recall_cpu_mean"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--backends", nargs="+", default=["postgres", "sqlite"], choices=["postgres", "sqlite"])
    ap.add_argument("--profile", help="write cProfile stats to PROFILE.<backend>")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC  uptime: {up}  ({os.cpu_count()} cores)")
    print(f"seeded {SEED} memories, {a.calls} remember+recall pairs, hash embedder, k=5")
    rows = {}
    with tempfile.TemporaryDirectory(prefix="agent-cpu-") as tmp:
        for backend in a.backends:
            prof = f"{a.profile}.{backend}" if a.profile else None
            if backend == "postgres":
                from pg_parity import pg_server

                with pg_server() as fresh:
                    url = fresh("agent_cpu")
                    seed(url)
                    rows[backend] = run(url, a.calls, prof)
            else:
                url = str(Path(tmp) / "agent.db")
                seed(url)
                rows[backend] = run(url, a.calls, prof)
    print(f"{'CPU ms per call':<22}" + "".join(f"{b:>12}" for b in rows))
    for key in (
        "remember_cpu_med",
        "remember_cpu_mean",
        "recall_cpu_med",
        "recall_cpu_mean",
        "pair_cpu_mean",
        "remember_wall_med",
        "recall_wall_med",
    ):
        print(f"{key:<22}" + "".join(f"{r[key]:>12.2f}" for r in rows.values()))
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"after: uptime: {up}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
