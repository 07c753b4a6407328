"""Cold CLI calls: a fresh `memconsole --db X search "..."` (hybrid) and `add` on a 10k database,
timed end to end as separate processes, hyperfine-style (warm-up, then N runs: mean ± sd, min, max),
for each embedder: sentence-transformers/torch (`minilm`, before), the numpy MiniLM (`numpy`, the
default after) and, as floors, `hash` and `none` (keyword-only). The load average is printed beside
every figure: on a shared 2-core machine it moves the numbers more than anything else.

    python bench/cold_cli.py                      # all embedders, 5 runs each
    python bench/cold_cli.py --runs 3 --embedders minilm,numpy
    python bench/cold_cli.py --cosine             # + numpy vs sentence-transformers on every LoCoMo turn
    python bench/cold_cli.py --write              # + rewrite the cold_cli section of BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import ROOT, locomo_path, machine, out_dir, write_section

QUERY = "which colour theme does the user like in the editor"
LABEL = {
    "minilm": "sentence-transformers (torch)",
    "numpy": "numpy MiniLM",
    "hash": "hash (floor: no model)",
    "none": "none (floor: keyword-only)",
}


def memconsole() -> list[str]:
    """What the installed `memconsole` script runs, against this checkout's code (cwd = ROOT)."""
    return [sys.executable, "-c", "import sys; from console.cli import main; sys.exit(main())"]


def database(n: int) -> Path:
    target = out_dir("cold_cli") / f"mem{n}.db"
    if not target.exists():
        from build_direct import build_direct

        build_direct(target, n)
    return target


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def time_call(argv: list[str], env: dict[str, str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
    dt = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv[-4:])} failed ({out.returncode}): {out.stderr.strip()[:300]}")
    return dt, json.loads(out.stdout)


def bench(db: Path, embedder: str, runs: int, warmup: int) -> list[dict]:
    scratch = db.with_name(f"scratch-{embedder}.db")
    for s in ("", "-wal", "-shm"):
        Path(str(scratch) + s).unlink(missing_ok=True)
    shutil.copyfile(db, scratch)
    env = {**os.environ, "MEMCONSOLE_EMBEDDER": embedder}
    # An installed memconsole reads cached bytecode; a shell with PYTHONDONTWRITEBYTECODE would
    # charge every call ~0.2 s of compiling the engine instead.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    base = [*memconsole(), "--db", str(scratch), "--actor", "bench"]
    verbs = {
        "search": [*base, "search", QUERY, "--no-access", "--json"],
        "add": [*base, "add", "", "--no-dedup", "--json"],
    }
    rows = []
    for verb, argv in verbs.items():
        times, loads = [], []
        for i in range(warmup + runs):
            if verb == "add":
                argv[-3] = f"cold add {embedder} {i}: the user prefers dark mode in every editor"
            loads.append(load())
            dt, doc = time_call(argv, env)
            if verb == "search":
                want = "keyword" if embedder == "none" else "hybrid"
                assert doc["mode"] == want, f"{embedder}: search ran {doc['mode']}, not {want}"
            if i >= warmup:
                times.append(dt)
        rows.append(
            {
                "embedder": embedder,
                "verb": verb,
                "runs": runs,
                "mean": statistics.fmean(times),
                "sd": statistics.stdev(times) if len(times) > 1 else 0.0,
                "min": min(times),
                "max": max(times),
                "load": f"{loads[0]}–{load()}",
            }
        )
        print(
            f"  {LABEL[embedder]:<30} {verb:<6} {rows[-1]['mean']:.2f} s  (load {rows[-1]['load']})",
            flush=True,
        )
    for s in ("", "-wal", "-shm"):
        Path(str(scratch) + s).unlink(missing_ok=True)
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| embedder | verb | mean ± sd (s) | min (s) | max (s) | runs | load avg (1 min) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {LABEL[r['embedder']]} | {r['verb']} | {r['mean']:.2f} ± {r['sd']:.2f} | "
            f"{r['min']:.2f} | {r['max']:.2f} | {r['runs']} | {r['load']} |"
        )
    return "\n".join(lines)


def cosine() -> str:
    """numpy MiniLM against sentence-transformers on every LoCoMo dev turn, and both throughputs."""
    import numpy as np

    from engine.embed import MiniLMEmbedder
    from engine.embed_numpy import NumpyMiniLM

    turns = [
        t["text"]
        for conv in json.loads(locomo_path().read_text(encoding="utf-8"))
        for k, s in conv["conversation"].items()
        if k.startswith("session_") and isinstance(s, list)
        for t in s
        if t.get("text")
    ]
    out = []
    vecs = {}
    for name, make in (("sentence-transformers", MiniLMEmbedder), ("numpy", NumpyMiniLM)):
        t0, l0 = time.perf_counter(), load()
        emb = make()
        t1 = time.perf_counter()
        vecs[name] = emb.embed(turns)
        t2 = time.perf_counter()
        out.append(
            f"- {name}: model ready in {t1 - t0:.2f} s (in-process, its own imports included), "
            f"{len(turns) / (t2 - t1):.0f} turns/s over {len(turns)} turns (load {l0}–{load()})"
        )
    cos = (vecs["sentence-transformers"] * vecs["numpy"]).sum(1)
    out.append(
        f"- cosine numpy vs sentence-transformers over {len(turns)} LoCoMo dev turns: "
        f"min {cos.min():.7f}, mean {cos.mean():.7f}, p01 {np.percentile(cos, 1):.7f}"
    )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="memories in the database")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--embedders", default="minilm,numpy,hash,none")
    ap.add_argument("--cosine", action="store_true")
    ap.add_argument("--write", action="store_true", help="rewrite the cold_cli section of BENCHMARKS.md")
    args = ap.parse_args()
    db = database(args.n)
    print(f"cold CLI on {db.name} ({args.n:,} memories), {args.runs} runs + {args.warmup} warm-up each")
    rows = []
    for e in args.embedders.split(","):
        rows += bench(db, e.strip(), args.runs, args.warmup)
    body = [f"### Cold CLI calls ({args.n:,} memories)", "", machine(), "", table(rows)]
    if args.cosine:
        body += ["", cosine()]
    text = "\n".join(body)
    print("\n" + text)
    if args.write:
        write_section("cold_cli", text)


if __name__ == "__main__":
    main()
