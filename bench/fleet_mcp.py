"""The MCP HTTP door of the fleet bench (bench/fleet.py --doors mcp): one real `memconsole mcp
--http` server on the database, each agent a process driving it with the real MCP client SDK
(streamable HTTP, its own bearer token acting for its own agent name), alternating `remember` and
`recall` (recording access) — the engine calls of bench/fleet.py's agents, through the door."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.mcp_http_server import McpHttpServer  # noqa: E402 - the repository root is on sys.path now


def token_of(name: str) -> str:
    return f"fleet-token-{name}-0123456789abcdef"


def start_server(url: str, folder: Path, agents: list[str], config: str = "") -> McpHttpServer:
    """`memconsole mcp --http` on `url`, a token per agent, listening; hash embedder (as the agents
    in bench/fleet.py: the database's cost, not the model's). `config` is the server's TOML."""
    server = McpHttpServer(url, folder, "fleet-mcp", agents, token_of, config=config, actor="fleet-operator")
    server.wait_listening()
    return server


def mcp_agent(
    url: str, name: str, ready: Any, go: Any, seconds: float, out: Any, text: Any, words: list[str]
) -> None:
    """One agent process: an MCP client session; remember, recall, remember, ... until the time is up."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    rng = random.Random(name)
    res: dict[str, Any] = {"name": name, "writes": [], "recalls": [], "errors": [], "committed": []}

    def error(what: str, r: Any) -> str:
        body = " ".join(getattr(c, "text", str(c)) for c in (r.content or []))
        return f"{what}: {body}"[:300]

    said = [False]

    async def run() -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token_of(name)}"}, timeout=300)
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=300) as c:
            await c.call_tool("recall", {"query": "warm up", "k": 5, "agent": name})
            ready.put(name)
            said[0] = True
            await anyio.to_thread.run_sync(go.wait)
            cpu0 = time.process_time()
            end = time.monotonic() + seconds
            i = 0
            while time.monotonic() < end:
                i += 1
                t = time.monotonic()
                try:
                    r = await c.call_tool("remember", {"content": text(rng, name, i), "agent": name})
                    if r.is_error:
                        res["errors"].append(error("remember", r))
                    else:
                        res["writes"].append(time.monotonic() - t)
                        res["committed"].append((int(r.structured_content["id"]), time.time()))
                except Exception as exc:  # noqa: BLE001 - an error that reached a caller
                    res["errors"].append(f"remember: {type(exc).__name__}: {exc}"[:300])
                t = time.monotonic()
                try:
                    q = " ".join(rng.choice(words) for _ in range(3))
                    r = await c.call_tool("recall", {"query": q, "k": 5, "agent": name if i % 2 else None})
                    if r.is_error:
                        res["errors"].append(error("recall", r))
                    else:
                        res["recalls"].append(time.monotonic() - t)
                except Exception as exc:  # noqa: BLE001
                    res["errors"].append(f"recall: {type(exc).__name__}: {exc}"[:300])
            res["cpu_s"] = time.process_time() - cpu0  # the client side of this agent's loop

    try:
        anyio.run(run)
    except BaseException as exc:  # noqa: BLE001 - reported (the session itself failed)
        res["errors"].append(f"session: {type(exc).__name__}: {exc}"[:300])
        if not said[0]:
            ready.put(name)  # never leave the parent waiting
    out.put(res)
