"""Before/after the storage-port refactor (issue 23), both backends, interleaved pairs: runs
bench/port_probe.py against two checkouts (each first on PYTHONPATH, the same probe script for
both), alternating which side goes first, on fresh SQLite files and fresh databases of one
throwaway PostgreSQL server, and writes the medians with each run's load average.

    python bench/port_compare.py --before /path/to/old/checkout --after . [--pairs 3] [--n 2000] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, write_section  # noqa: E402
from pg_parity import pg_server  # noqa: E402

PROBE = Path(__file__).resolve().parent / "port_probe.py"
FIGURES = (
    ("ingest, add_memories batch (memories/s; higher is better)", ("ingest_batch_per_s",), True),
    ("ingest, add_memory one at a time, p50 (ms)", ("ingest_single_p50_ms",), False),
    ("hybrid search one-shot, p50 (ms)", ("search_oneshot", "p50_ms"), False),
    ("hybrid search one-shot, p95 (ms)", ("search_oneshot", "p95_ms"), False),
    ("hybrid search long-lived, p50 (ms)", ("search_longlived", "p50_ms"), False),
    ("hybrid search long-lived, p95 (ms)", ("search_longlived", "p95_ms"), False),
    ("decay pass, 40 days on (s)", ("decay_pass_s",), False),
    ("curator full run (s)", ("curator_full_s",), False),
    ("curator incremental, 100 new (s)", ("curator_incremental_s",), False),
    ("forget execute, 20-memory query case (s)", ("forget_execute_s",), False),
    ("forget verify (s)", ("forget_verify_s",), False),
    ("console first frame, in process (s)", ("first_frame_s",), False),
)


def run(side: Path, target: str, n: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(side), "HF_HUB_OFFLINE": "1"}
    load0 = os.getloadavg()[0]
    out = subprocess.run(
        [sys.executable, str(PROBE), "--target", target, "--n", str(n), "--frame", target],
        env=env, capture_output=True, text=True, timeout=1800, cwd=str(side),
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"probe failed on {side} ({target}):\n{out.stderr[-3000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if not res["engine"].startswith(str(side.resolve())):
        raise SystemExit(f"{side}: the probe imported {res['engine']}, not this checkout's engine")
    res["load"] = (load0, os.getloadavg()[0])
    return res


def value(res: dict[str, Any], path: tuple[str, ...]) -> float:
    v: Any = res
    for p in path:
        v = v[p]
    return float(v)


def table(runs: dict[tuple[str, str], list[dict[str, Any]]]) -> str:
    lines = [
        "| figure | backend | before (runs) | after (runs) | change |",
        "|---|---|---|---|---:|",
    ]
    for name, path, higher_better in FIGURES:
        for backend in ("sqlite", "postgres"):
            b = [value(r, path) for r in runs[("before", backend)]]
            a = [value(r, path) for r in runs[("after", backend)]]
            mb, ma = statistics.median(b), statistics.median(a)
            change = (mb / ma - 1) if higher_better else (ma / mb - 1)  # + is worse
            fmt = (lambda x: f"{x:,.0f}") if higher_better else (lambda x: f"{x:.3g}")
            lines.append(
                f"| {name} | {backend} | {fmt(mb)} ({', '.join(fmt(x) for x in b)}) |"
                f" {fmt(ma)} ({', '.join(fmt(x) for x in a)}) | {change:+.0%} |"
            )
    loads = []
    for (side, backend), rs in sorted(runs.items()):
        loads.append(
            f"{side} {backend}: " + ", ".join(f"{x:.1f}–{y:.1f}" for x, y in (r["load"] for r in rs))
        )
    return "\n".join(lines) + "\n\nLoad average (1 min), start–end of each run: " + "; ".join(loads) + "."


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--label", default="", help="what the two sides are (commits), for the section")
    args = ap.parse_args()
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {
        (s, b): [] for s in sides for b in ("sqlite", "postgres")
    }
    started = machine()
    with pg_server() as fresh, tempfile.TemporaryDirectory(prefix="port-compare-") as tmp:
        k = 0
        for pair in range(args.pairs):
            order = ("before", "after") if pair % 2 == 0 else ("after", "before")
            for backend in ("sqlite", "postgres"):
                for side in order:
                    k += 1
                    target = str(Path(tmp) / f"m{k}.db") if backend == "sqlite" else fresh("port")
                    res = run(sides[side], target, args.n)
                    runs[(side, backend)].append(res)
                    print(f"pair {pair + 1} {backend} {side}: {json.dumps(res)}", flush=True)
    body = (
        "## Storage port before/after (issue 23): both backends, interleaved pairs"
        " (`bench/port_compare.py`)\n\n"
        f"{args.label}\nStarted: {started}. Finished: {machine()}. {args.n:,} memories per run, a hash\n"
        "embedder (storage cost, not the model's), each run on a fresh SQLite file or a fresh database of\n"
        "one throwaway PostgreSQL 18 + pgvector server on the same machine (unix socket). Pairs alternate\n"
        "which side runs first. Change = after vs before on the median (+ is worse).\n\n" + table(runs)
    )
    print(body)
    if args.write:
        write_section("port_compare", body)


if __name__ == "__main__":
    main()
