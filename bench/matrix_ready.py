"""Time from opening a file to the in-memory vector matrix being ready (issue 17), at 100k and 1M
memories: the bulk load (the store's sequential read of every vector, filter fields in one query,
numpy codes and sign bits) against the row-by-row load it replaced, interleaved, each run in a
fresh process. Until the matrix is ready, searches use the store's vector index (vec0 brute force).

    .venv/bin/python bench/matrix_ready.py [--sizes 100000,1000000] [--runs 2]

Files: bench/build_direct.py's (`--n 1000000` seeds 1M).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from common import machine, out_dir, write_section

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import json, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
from engine import open_engine
from engine.retrieval import vectors
from engine.retrieval.vector_matrix import VectorMatrix
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
if sys.argv[2] == "before":  # the row-by-row load: no bulk read
    vectors.VectorMatrix = lambda v, feed, bulk=None: VectorMatrix(v, feed)
eng = open_engine(sys.argv[1], embedder=None, actor="bench")
opened, base = time.perf_counter() - t0, rss()
if sys.argv[2] == "keyword":  # the keyword matrix: every memory's postings
    eng.retrieval.keyword.keep_in_memory()
    n = len(eng.retrieval.keyword.matrix.ids)
else:
    eng.vectors.keep_in_memory()
    n = eng.vectors.matrix.n
ready, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"opened": opened, "ready": ready, "cpu": cpu, "n": n, "rss": rss() - base}))
eng.close()
"""


def probe(path: Path, which: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), which],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    got["load"] = os.getloadavg()[0]
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--runs", type=int, default=2, help="runs of each, interleaved")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        path = out_dir("latency") / f"mem{n}.db"
        if not path.exists():
            raise SystemExit(f"{path} is missing: run bench/build_direct.py --n {n} first")
        got: dict[str, list[dict]] = {"after": [], "before": [], "keyword": []}
        for i in range(args.runs):
            for which in ("after", "before", "keyword") if i % 2 == 0 else ("keyword", "before", "after"):
                r = probe(path, which)
                got[which].append(r)
                print(f"{n:,} {which}: ready {r['ready']:.2f} s (CPU {r['cpu']:.2f} s), "
                      f"+{r['rss']:.0f} MB, load {r['load']:.1f}", flush=True)  # fmt: skip
        for which in ("before", "after", "keyword"):
            rs = got[which]
            rows.append(
                f"| {n:,} | {which} | "
                + " / ".join(f"{r['ready']:.2f}" for r in rs)
                + " | "
                + " / ".join(f"{r['cpu']:.2f}" for r in rs)
                + f" | {rs[0]['opened']:.2f} | +{max(r['rss'] for r in rs):.0f} MB | "
                + ", ".join(f"{r['load']:.1f}" for r in rs)
                + " |"
            )
    body = f"""## Matrix-ready time (`bench/matrix_ready.py`)

Machine: {machine()}.
From a fresh process opening the file to the in-memory vector matrix answering searches
(`keep_in_memory()` in the foreground; the console and MCP server load it in the background and
search through vec0 meanwhile). "before": the row-by-row load through the vector store's scan
(vec0's virtual table, a Python step per row); "after": the store's bulk read (vec0's chunk tables
in one sequential scan straight into the matrix), the filter fields in one query, codes and sign
bits built with numpy (engine/retrieval/vector_matrix.py). Runs interleaved, each in its own
process; the machine is shared, so wall times swing with the load, CPU time less. "keyword": the
keyword matrix (engine/retrieval/keyword_matrix.py: FTS5's postings read through its vocabulary
table, one text list per word parsed by numpy); until it is ready FTS5 answers with the one-shot
bounds.

| memories | path | ready s (runs) | CPU s (runs) | open s | matrix RSS | load (1-min) per run |
|---|---|---|---|---:|---:|---|
{chr(10).join(rows)}
"""
    print(body)
    if not args.no_write:
        write_section("matrix_ready", body)


if __name__ == "__main__":
    main()
