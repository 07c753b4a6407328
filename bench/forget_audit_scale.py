"""Forget against a long audit log (issue 24): how long one forget's deletion takes, and the longest
stall of a concurrent writer while it runs, at 20k and 100k audit rows (1M with --million, for
`make stress`), on SQLite and PostgreSQL, for two code trees (before: a detached worktree of main;
after: this tree), each run in its own process with that tree on PYTHONPATH.

Each case: a fresh database, one memory holding a canary (its `add` row quotes it), N filler audit
rows appended through the engine's own `engine.audit.log.append` (so each tree writes its own
format), then a writer process adding memories in a loop while this process executes a forget of
the canary memory (verify=False: the byte scan is timed by bench/forget.py). Reported: the forget's
execute time, the writer's longest write that overlapped it, and whether `audit --verify` holds.

    python bench/forget_audit_scale.py --before /work/wt-audit-base [--million] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

WRITER = """
import sys, time
from engine import HashEmbedder, open_engine
eng = open_engine(sys.argv[1], embedder=HashEmbedder(), actor="writer")
stop = sys.argv[2]
import os
i = 0
print("ready", flush=True)
while not os.path.exists(stop):
    t = time.time()
    try:
        eng.add_memory(f"writer note {i} about the deploy window", dedup=False)
        print(f"{t} {time.time()}", flush=True)
    except Exception as exc:  # StoreBusy and the like: the stall ended in an error
        print(f"{t} {time.time()} {type(exc).__name__}", flush=True)
    i += 1
eng.close()
"""


def child(db: str, n: int) -> dict:
    """One case, in a process whose PYTHONPATH is the tree under test."""
    from engine import HashEmbedder, open_engine
    from engine.audit import log as audit

    eng = open_engine(db, embedder=HashEmbedder(), actor="bench")
    secret = eng.add_memory("The vault passphrase is Canary-Okapi-93be1f-Fjord", dedup=False)
    t = time.perf_counter()
    done, step, now = 0, 5000, time.time()
    while done < n:
        k = min(step, n - done)

        def fill(c, base=done, k=k):
            # One append (the chain's lock, its head), then rows in the tree's own format linked in
            # Python: the same rows as k appends, without two round trips each.
            rid = audit.append(c, at=now + base * 1e-3, actor="agent0", action="probe", target_kind="memory",
                               target_id=str(base + 10), reason="bench filler",
                               summary={"preview": f"filler note {base} about the window"})  # fmt: skip
            prev, hs = c.audit_queries.row(rid)["hash"], audit.hasher()
            for i in range(base + 1, base + k):
                prev = audit._insert(c, hs, prev, now + i * 1e-3, f"agent{i % 16}", "probe", "memory",
                                     str(i + 10), "bench filler",
                                     json.dumps({"preview": f"filler note {i} about the deploy window"},
                                                separators=(",", ":")))[1]  # fmt: skip

        eng.store.write(fill)
        done += k
    fill_s = time.perf_counter() - t
    stop = Path(tempfile.mkdtemp(prefix="mc-bench-stop-")) / "stop"
    env = {**os.environ, "MEMCONSOLE_EMBEDDER": "none"}
    w = subprocess.Popen(
        [sys.executable, "-c", WRITER, db, str(stop)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert w.stdout is not None and w.stdout.readline().strip() == "ready"
    time.sleep(1.0)  # the writer is writing
    pv = eng.forget.run("memory", [secret], "bench", preview=True)
    t0 = time.time()
    eng.forget.execute(pv.request.id, verify=False)
    t1 = time.time()
    time.sleep(0.5)
    stop.touch()
    out, _ = w.communicate(timeout=600)
    lat = [line.split() for line in out.splitlines() if line.strip()]
    during = [float(x[1]) - float(x[0]) for x in lat if float(x[1]) >= t0 and float(x[0]) <= t1]
    errors = sorted({x[2] for x in lat if len(x) > 2})
    tv = time.perf_counter()
    chk = eng.audit.verify()
    verify_s = time.perf_counter() - tv
    eng.close()
    return {
        "n": n,
        "fill_s": round(fill_s, 1),
        "forget_s": round(t1 - t0, 3),
        "stall_s": round(max(during, default=0.0), 3),
        "writes_during": len(during),
        "writer_errors": errors,
        "verify_ok": bool(chk.ok),
        "verify_s": round(verify_s, 2),
        "verify_msg": chk.message[:120],
    }


def run_case(root: Path, db: str, n: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env["MEMCONSOLE_EMBEDDER"] = "none"
    p = subprocess.run(
        [sys.executable, str(HERE / "forget_audit_scale.py"), "--child", db, "--n", str(n)],
        cwd=str(root),
        env=env,
        capture_output=True,
        text=True,
        timeout=7200,
    )
    if p.returncode != 0:
        return {"n": n, "error": p.stderr.strip().splitlines()[-1:] or ["?"]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--before", default=None, help="a detached worktree of main (the code before)")
    ap.add_argument("--sizes", default="20000,100000")
    ap.add_argument("--million", action="store_true", help="add 1,000,000 audit rows (make stress)")
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--write", action="store_true", help="write BENCHMARKS.md section audit_scale")
    ap.add_argument("--results", default=None, help="format the JSON lines of an earlier run's log")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.n)))
        return
    if args.results:
        lines = Path(args.results).read_text().splitlines()
        report([json.loads(x) for x in lines if x.startswith('{"backend"')], args.write)
        return
    from pg_parity import pg_server

    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.million:
        sizes.append(1_000_000)
    trees = ([("before", Path(args.before))] if args.before else []) + [("after", ROOT)]
    results = []
    with tempfile.TemporaryDirectory() as tmp, pg_server() as fresh:
        for backend in args.backends.split(","):
            for n in sizes:
                for label, root in trees:
                    db = str(Path(tmp) / f"{label}-{n}.db") if backend == "sqlite" else fresh("audscale")
                    r = {"backend": backend, "code": label, **run_case(root, db, n)}
                    print(json.dumps(r), flush=True)
                    results.append(r)
    report(results, args.write)


def report(results: list[dict], write: bool) -> None:
    from common import machine, write_section

    load = Path("/proc/loadavg").read_text().split()[:3]
    lines = [
        "## audit_scale (issue 24): a forget against a long audit log",
        "",
        f"{machine()}; `uptime` load {' '.join(load)} at the end.",
        "`python bench/forget_audit_scale.py --before <main worktree>`: a fresh database, one memory whose",
        "`add` row quotes a canary, N filler audit rows, then one forget of that memory (execute, no byte",
        "scan) while a second process adds memories in a loop. Stall = that writer's longest write",
        "overlapping the forget. before = main (re-chains every row after the first redacted one);",
        "after = digest-chained rows redacted in place.",
        "",
        "| backend | audit rows | code | forget execute | longest writer stall | writes during | verify |",
        "|---|---:|---|---:|---:|---:|---|",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['backend']} | {r['n']:,} | {r['code']} | error: {r['error']} | | | |")
            continue
        errs = f" ({', '.join(r['writer_errors'])})" if r.get("writer_errors") else ""
        lines.append(
            f"| {r['backend']} | {r['n']:,} | {r['code']} | {r['forget_s']:.2f} s | {r['stall_s']:.2f} s"
            f"{errs} "
            f"| {r['writes_during']} | {'intact' if r['verify_ok'] else 'BROKEN'} ({r['verify_s']:.1f} s) |"
        )
    body = "\n".join(lines)
    print(body)
    if write:
        write_section("audit_scale", body)


if __name__ == "__main__":
    main()
