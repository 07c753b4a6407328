"""The real model under a fleet (issues #24/#26): one `memconsole mcp --http` server with the numpy
MiniLM, N agents recalling through it at once, with the embed batcher off and on
(engine/embedding/batcher.py, `[embed_batch]`).

Per backend, mode and N: recalls/s, p50/p95 recall latency, and the server's CPU ms per recall
(utime+stime of its process from /proc, over the timed window: on a loaded machine a steadier
figure than wall time). Agents are N MCP client sessions (real SDK, streamable HTTP, each its own
bearer token and agent name) on one event loop in a child process: one interpreter for the
clients, so their CPU does not dwarf the server's on 2 cores. Each recall is a 3-word query over a
store of `--memories` memories, recording access (as agents do: a write per recall).

    python bench/embed_batch.py                              # SQLite, N = 1 4 16, off/on, 15 s
    python bench/embed_batch.py --backends sqlite postgres --seconds 20 --json out.json
    python bench/embed_batch.py --modes off on w0 w5         # w<ms>: on, with that window
    python bench/embed_batch.py --model-only --seconds 5     # the model alone, N threads, no server
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from fleet_probes import cpu_of  # noqa: E402 - bench/ is on sys.path (the script's folder)

from tests.mcp_http_server import McpHttpServer  # noqa: E402 - the root is on sys.path now

WORDS = [
    "deploy",
    "key",
    "rotates",
    "mondays",
    "staging",
    "cluster",
    "paging",
    "alert",
    "runbook",
    "invoice",
    "customer",
    "latency",
    "cache",
    "schema",
    "migration",
    "backup",
    "restore",
    "garden",
    "painting",
    "adoption",
    "charity",
    "race",
    "sunrise",
    "lake",
    "kitchen",
    "conference",
    "flight",
    "hotel",
    "budget",
    "review",
    "onboarding",
    "laptop",
    "password",
    "vendor",
    "contract",
]


# The server runs as `python -c SERVE stats_file memconsole-args...`: the real CLI, plus a thread that
# writes the process's batcher counts (engine/embedding/batcher.py) to a file 5 times a second.
SERVE = """
import json, sys, threading, time
from console.cli import main
def dump(path):
    from engine.embedding import batcher
    while True:
        time.sleep(0.2)
        with batcher._SHARED_LOCK:
            tot = {}
            for per in list(batcher._SHARED.values()):
                for b in per.values():
                    for k, v in b.stats.as_dict().items():
                        tot[k] = max(tot.get(k, 0), v) if k == "largest" else tot.get(k, 0) + v
        with open(path + ".tmp", "w") as f:
            json.dump(tot, f)
        import os; os.replace(path + ".tmp", path)
threading.Thread(target=dump, args=(sys.argv[1],), daemon=True).start()
sys.argv = ["memconsole"] + sys.argv[2:]
sys.exit(main())
"""


def batch_stats(path: Path) -> dict[str, int]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def token_of(name: str) -> str:
    return f"embatch-token-{name}-0123456789abcdef"


def sentence(rng: random.Random, i: int) -> str:
    w = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    return f"Note {i}: " + " ".join(w) + "."


def seed(url: str, n: int) -> None:
    """(In a child: nothing here holds the model or a connection when the server starts.)"""
    from engine import open_engine

    eng = open_engine(url, embedder="numpy", actor="bench", load="now")
    try:
        rng = random.Random(7)
        eng.add_memories([{"content": sentence(rng, i), "agent": f"agent{i % 16}"} for i in range(n)])
    finally:
        eng.close()


class Server(McpHttpServer):
    """`memconsole mcp --http` with the numpy MiniLM and `config` as its TOML, listening; its
    batcher counts in `stats` (SERVE)."""

    def __init__(self, url: str, folder: Path, agents: list[str], config: str) -> None:
        self.stats = folder / "batch-stats.json"
        self.stats.unlink(missing_ok=True)
        serve = [sys.executable, "-c", SERVE, str(self.stats)]
        super().__init__(
            url,
            folder,
            "mcp",
            agents,
            token_of,
            config=config,
            embedder="numpy",
            actor="bench",
            command=serve,
        )
        self.wait_listening()


def agents_run(url: str, names: list[str], seconds: float, pid: int, stats: Path, out: Any) -> None:
    """(A child.) N sessions; all warm (the model answers: mode hybrid), then recall for `seconds`."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    lat: list[float] = []
    errors: list[str] = []
    window: dict[str, float] = {}

    async def main() -> None:
        warm = anyio.Event()
        ready = [0]
        end = [0.0]

        async def agent(name: str) -> None:
            rng = random.Random(name)
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token_of(name)}"}, timeout=300)
            async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=300) as c:
                for _ in range(600):  # the server loads the model in the background: wait for it
                    r = await c.call_tool("recall", {"query": "warm up", "k": 5, "agent": name})
                    if not r.is_error and (r.structured_content or {}).get("mode") == "hybrid":
                        break
                    await anyio.sleep(0.2)
                ready[0] += 1
                if ready[0] == len(names):
                    window["cpu0"], window["t0"] = cpu_of(pid), time.monotonic()
                    window["stats0"] = batch_stats(stats)
                    end[0] = time.monotonic() + seconds
                    warm.set()
                await warm.wait()
                while time.monotonic() < end[0]:
                    q = " ".join(rng.choice(WORDS) for _ in range(3))
                    t = time.monotonic()
                    try:
                        r = await c.call_tool("recall", {"query": q, "k": 5, "agent": name})
                        if r.is_error:
                            errors.append(" ".join(getattr(x, "text", "") for x in r.content or [])[:200])
                        elif r.structured_content.get("mode") != "hybrid":
                            errors.append(f"mode {r.structured_content.get('mode')}")
                        else:
                            lat.append(time.monotonic() - t)
                    except Exception as exc:  # noqa: BLE001 - an error that reached a caller
                        errors.append(f"{type(exc).__name__}: {exc}"[:200])
                if "cpu1" not in window:  # the first agent done: the window closes
                    window["cpu1"], window["t1"] = cpu_of(pid), time.monotonic()
                    window["stats1"] = batch_stats(stats)

        async with anyio.create_task_group() as tg:
            for n in names:
                tg.start_soon(agent, n)

    anyio.run(main)
    out.put({"lat": lat, "errors": errors, **window})


def measure(url: str, folder: Path, mode: str, n: int, seconds: float) -> dict[str, Any]:
    names = [f"agent{i}" for i in range(n)]
    if mode == "off":
        config = "[embed_batch]\nenabled = false\n"
    elif mode == "on":
        config = ""  # the defaults
    else:  # w<ms>
        config = f"[embed_batch]\nwindow_ms = {float(mode[1:])}\n"
    server = Server(url, folder, names, config)
    try:
        q: Any = mp.Queue()
        p = mp.Process(target=agents_run, args=(server.url, names, seconds, server.proc.pid, server.stats, q))
        p.start()
        res = q.get(timeout=seconds + 600)
        p.join()
    finally:
        server.stop()
    lat = sorted(res["lat"])
    span = res["t1"] - res["t0"]
    done = len(lat)
    s0, s1 = res.get("stats0") or {}, res.get("stats1") or {}
    calls = s1.get("calls", 0) - s0.get("calls", 0)
    batches = s1.get("batches", 0) - s0.get("batches", 0)
    return {
        "mode": mode,
        "agents": n,
        "recalls": done,
        "recalls_s": round(done / span, 1),
        "p50_ms": round(1000 * statistics.median(lat), 1) if lat else None,
        "p95_ms": round(1000 * lat[int(0.95 * (len(lat) - 1))], 1) if lat else None,
        "server_cpu_ms": round(1000 * (res["cpu1"] - res["cpu0"]) / max(1, done), 1),
        "calls_per_batch": round(calls / batches, 2) if batches else None,
        "largest_batch": s1.get("largest"),
        "errors": len(res["errors"]),
        "first_error": res["errors"][0] if res["errors"] else "",
    }


def model_only(threads: int, seconds: float, window_ms: float | None) -> dict[str, Any]:
    """The model alone: `threads` threads each embedding one query at a time for `seconds`, through
    the batcher (window_ms) or straight to the model (None). The ceiling the batcher can give."""
    import threading

    from engine.embed_numpy import shared_numpy_minilm
    from engine.embedding.batcher import BatchingEmbedder

    model = shared_numpy_minilm()
    emb: Any = model if window_ms is None else BatchingEmbedder(model, window_ms / 1000.0, 32)
    emb.embed(["warm up"])
    lat: list[float] = []
    lock = threading.Lock()
    gate = threading.Barrier(threads + 1)
    end = [0.0]

    def one(i: int) -> None:
        rng = random.Random(i)
        gate.wait()
        mine = []
        while time.monotonic() < end[0]:
            q = " ".join(rng.choice(WORDS) for _ in range(3))
            t = time.monotonic()
            emb.embed([q])
            mine.append(time.monotonic() - t)
        with lock:
            lat.extend(mine)

    ts = [threading.Thread(target=one, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    end[0] = time.monotonic() + seconds
    c0, t0 = time.process_time(), time.monotonic()
    gate.wait()
    for t in ts:
        t.join()
    span, cpu = time.monotonic() - t0, time.process_time() - c0
    lat.sort()
    stats = getattr(emb, "stats", None)
    return {
        "threads": threads,
        "mode": "off" if window_ms is None else f"w{window_ms:g}",
        "embeds_s": round(len(lat) / span, 1),
        "p95_ms": round(1000 * lat[int(0.95 * (len(lat) - 1))], 1),
        "cpu_ms": round(1000 * cpu / len(lat), 1),
        "calls_per_batch": round(stats.calls / stats.batches, 2) if stats and stats.batches else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--modes", nargs="+", default=["off", "on"], help="off | on | w<ms> (on, that window)")
    ap.add_argument("--backends", nargs="+", default=["sqlite"], choices=["sqlite", "postgres"])
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--memories", type=int, default=400)
    ap.add_argument("--dir", default=str(ROOT / ".bench" / "embed_batch"), help="scratch folder")
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--model-only", action="store_true", help="only the model in threads, no server")
    a = ap.parse_args()
    if a.model_only:
        for n in a.agents:
            for mode in a.modes:
                w = None if mode == "off" else (2.0 if mode == "on" else float(mode[1:]))
                print(json.dumps(model_only(n, a.seconds, w)), flush=True)
        return 0
    scratch = Path(a.dir)
    scratch.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    pg = None
    try:
        for backend in a.backends:
            folder = Path(tempfile.mkdtemp(dir=scratch))
            if backend == "postgres":
                from bench.fleet import pg_server

                pg = pg_server(scratch / "pg", sync=False)
                db = f"embatch_{os.getpid()}"
                pg.psql(f"CREATE DATABASE {db};")
                url = str(pg.get_uri(db))
            else:
                url = str(folder / "memory.db")
            p = mp.Process(target=seed, args=(url, a.memories))
            p.start()
            p.join()
            if p.exitcode != 0:
                raise SystemExit("seeding failed")
            for n in a.agents:
                for mode in a.modes:  # off and on back to back: the machine's load is alike
                    row = {"backend": backend, **measure(url, folder, mode, n, a.seconds)}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        if pg is not None:
            pg.cleanup()
    head = ("backend", "N", "mode", "recalls/s", "p50 ms", "p95 ms", "srv CPU ms", "calls/batch", "err")
    print("\n{:8} {:>3} {:5} {:>9} {:>8} {:>8} {:>10} {:>11} {}".format(*head))
    for r in rows:
        print(f"{r['backend']:8} {r['agents']:>3} {r['mode']:5} {r['recalls_s']:>9} {r['p50_ms']:>8} "
              f"{r['p95_ms']:>8} {r['server_cpu_ms']:>10} {r['calls_per_batch']!s:>11} "
              f"{r['errors']}")  # fmt: skip
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
