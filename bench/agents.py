"""The agents' doors: `recall` round-trips through `memconsole mcp` over stdio and over streamable
HTTP (bearer token) at 10,000 and 100,000 memories, `remember` throughput, and the cold CLI
`search`/`add` beside them (what an agent shelling out pays per call).

Servers are real `memconsole mcp` processes driven by the `mcp` SDK's client; the model is the
default embedder, loaded once per server (the bench waits until recall runs hybrid). Databases
are seeded with bench/build_direct.py and copied per run (recall records access: it writes).

    python bench/agents.py                       # 10k and 100k, 200 recalls per transport
    python bench/agents.py --sizes 10000 --recalls 50 --remembers 100
    python bench/agents.py --write               # + rewrite the agents section of BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
from common import ROOT, SyntheticCorpus, machine, out_dir, pct, write_section
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TOKEN = "bench-token-0123456789abcdef"
EXE = Path(sys.executable).with_name("memconsole")


def database(n: int) -> Path:
    target = out_dir("agents") / f"mem{n}.db"
    if not target.exists():
        from build_direct import build_direct

        build_direct(target, n)
    return target


def scratch(n: int, tmp: Path) -> Path:
    dest = tmp / f"mem{n}.db"
    for suffix in ("-wal", "-shm", ""):
        Path(str(dest) + suffix).unlink(missing_ok=True)
    shutil.copyfile(database(n), dest)
    return dest


def env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def stdio_client(db: Path) -> Client:
    params = StdioServerParameters(
        command=str(EXE), args=["--db", str(db), "--actor", "bench", "mcp"], env=env()
    )
    return Client(params, read_timeout_seconds=300)


class HttpServer:
    def __init__(self, db: Path, tmp: Path) -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        tokens = tmp / "tokens"
        tokens.write_text(f"{TOKEN} bench\n")
        tokens.chmod(0o600)
        self.proc = subprocess.Popen(
            [
                str(EXE),
                "--db",
                str(db),
                "mcp",
                "--http",
                f"127.0.0.1:{self.port}",
                "--token-file",
                str(tokens),
            ],
            env=env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import socket as _s

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                _s.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("the HTTP server did not listen in 120 s")

    def client(self) -> Client:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=300)
        url = f"http://127.0.0.1:{self.port}/mcp"
        return Client(streamable_http_client(url, http_client=http), read_timeout_seconds=300)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


async def until_hybrid(c: Client) -> float:
    """Seconds until the server's model is loaded (recall says mode=hybrid)."""
    t0 = time.perf_counter()
    while True:
        r = await c.call_tool("recall", {"query": "warm up the model", "k": 1})
        if r.structured_content and r.structured_content.get("mode") == "hybrid":
            return time.perf_counter() - t0
        if time.perf_counter() - t0 > 300:
            raise SystemExit("the model did not load in 300 s")
        await anyio.sleep(0.2)


async def recalls(c: Client, queries: list[str], k: int = 10) -> list[float]:
    for q in queries[:5]:  # warm caches
        await c.call_tool("recall", {"query": q, "k": k})
    out = []
    for q in queries:
        t0 = time.perf_counter()
        r = await c.call_tool("recall", {"query": q, "k": k})
        out.append(time.perf_counter() - t0)
        if r.is_error:
            raise SystemExit(f"recall failed: {r.content}")
    return out


async def remembers(c: Client, n: int, tag: str) -> float:
    t0 = time.perf_counter()
    for i in range(n):
        r = await c.call_tool(
            "remember",
            {"content": f"bench {tag} note {i}: the deploy of service {i} passed", "agent": "bench"},
        )
        if r.is_error:
            raise SystemExit(f"remember failed: {r.content}")
    return n / (time.perf_counter() - t0)


def run(
    connect: Callable[[], AbstractAsyncContextManager[Client]], queries: list[str], n_rem: int, tag: str
) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        t0 = time.perf_counter()
        async with connect() as c:
            connected = time.perf_counter() - t0
            ready = await until_hybrid(c)
            lat = await recalls(c, queries)
            rate = await remembers(c, n_rem, tag) if n_rem else float("nan")
        return {
            "connect": connected,
            "ready": ready,
            "p50": pct(lat, 50),
            "p95": pct(lat, 95),
            "mean": statistics.fmean(lat),
            "remember_per_s": rate,
        }

    return anyio.run(go)


def cold_cli(db: Path, query: str, runs: int = 3) -> dict[str, float]:
    def once(argv: list[str]) -> float:
        t0 = time.perf_counter()
        subprocess.run(argv, env=env(), check=True, capture_output=True, timeout=300, cwd=ROOT)
        return time.perf_counter() - t0

    base = [str(EXE), "--db", str(db)]
    search = [once([*base, "search", query, "--json", "--no-access"]) for _ in range(runs)]
    add = [once([*base, "add", f"cold cli note {i}", "--json"]) for i in range(runs)]
    return {"search": statistics.median(search), "add": statistics.median(add)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--recalls", type=int, default=200)
    ap.add_argument("--remembers", type=int, default=200)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    queries = SyntheticCorpus().queries(args.recalls)
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-agents-") as t:
        tmp = Path(t)
        for n in [int(s) for s in args.sizes.split(",")]:
            db = scratch(n, tmp)
            rem = args.remembers if n == 10_000 else 0
            res = {"stdio": run(partial(stdio_client, db), queries, rem, "stdio")}
            srv = HttpServer(db, tmp)
            try:
                res["http"] = run(srv.client, queries, rem, "http")
            finally:
                srv.stop()
            cli = cold_cli(db, queries[0])
            for tr, r in res.items():
                rate = "" if r["remember_per_s"] != r["remember_per_s"] else f"{r['remember_per_s']:.0f}"
                rows.append(
                    f"| {n:,} | MCP {tr} | {r['p50'] * 1000:.1f} | {r['p95'] * 1000:.1f} | {rate} | "
                    f"{r['connect']:.1f} s + model {r['ready']:.1f} s |"
                )
            rows.append(
                f"| {n:,} | cold CLI `search` / `add` | {cli['search'] * 1000:.0f} | — | "
                f"{1 / cli['add']:.2f} | (one process per call) |"
            )
            print("\n".join(rows[-3:]), flush=True)
    body = "\n".join(
        [
            "## Agents' doors: MCP recall and remember (`bench/agents.py`)",
            "",
            f"{machine()}. Real `memconsole mcp` processes driven by the `mcp` SDK client, default",
            f"embedder loaded once per server; {args.recalls} recalls (k=10, synthetic queries) after 5",
            "warm-up calls; remember = sequential calls from one client (10k only). Cold CLI = a fresh",
            "`memconsole search --json` (median of 3) and the `add` rate it allows. A shared machine: the",
            "load average moves p95 more than the database size does.",
            "",
            "| memories | door | recall p50 ms | recall p95 ms | remember / s | start-up |",
            "|---:|---|---:|---:|---:|---|",
            *rows,
        ]
    )
    print(body)
    if args.write:
        write_section("agents", body)


if __name__ == "__main__":
    main()
