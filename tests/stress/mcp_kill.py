"""kill -9 at the MCP door (issue #24): several `memconsole mcp --http` servers on one database (as
behind a load balancer), agents driving them with the real MCP client SDK; one agent process is
SIGKILLed while its call is in flight, then one whole server is SIGKILLed while its agents' calls
are in flight. The agents of the servers still up must see no error, every write any agent saw
acknowledged must be present with its content, and `memconsole audit --verify` must hold.

Each agent appends a line per step to its own file (one os.write per line, so a kill cuts at most
the line being written): `S i` before a call is sent, `M <id> <sha1>` when a remember was
acknowledged, `R` for a recall, `E ...` for an error that reached it. Agents are forked from the
test process with the MCP client already imported (a fresh interpreter each costs seconds of CPU
importing it on a loaded machine), before any engine is open here."""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp_http_server import McpHttpServer
from tests.stress.fleet_kill import WORDS, AgentAcks, read_acks, sha


def token_of(name: str) -> str:
    return f"kill-token-{name}-0123456789abcdef"


def agent(url: str, name: str, ack_path: str, ready: Any, go: Any, stop: Any, seconds: float) -> None:
    """One agent process: an MCP session; remember, recall, ... until `stop` or the time is up.
    After an error that is not a tool error (its server is gone) it stops: nothing to call."""
    fd = os.open(ack_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def say(line: str) -> None:
        os.write(fd, (line.replace("\n", " ")[:300] + "\n").encode())

    rng = random.Random(name)

    async def run() -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token_of(name)}"}, timeout=120)
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as c:
            await c.call_tool("recall", {"query": "warm up", "k": 3, "agent": name})
            say("READY")
            ready.put(name)
            await anyio.to_thread.run_sync(go.wait)
            end = time.monotonic() + seconds
            i = 0
            while time.monotonic() < end and not stop.is_set():
                i += 1
                text = f"{name} note {i}: " + " ".join(rng.choice(WORDS) for _ in range(8))
                say(f"S {i}")
                try:
                    r = await c.call_tool("remember", {"content": text, "agent": name})
                except Exception as exc:  # noqa: BLE001 - an error that reached this caller
                    say(f"E remember {i}: {type(exc).__name__}: {exc}")
                    return
                if r.is_error:
                    say(f"E remember {i}: {' '.join(getattr(x, 'text', '') for x in r.content)}")
                else:
                    say(f"M {int(r.structured_content['id'])} {sha(text)}")
                say(f"S {i}r")
                try:
                    q = " ".join(rng.choice(WORDS) for _ in range(3))
                    r = await c.call_tool("recall", {"query": q, "k": 5, "agent": name})
                except Exception as exc:  # noqa: BLE001
                    say(f"E recall {i}: {type(exc).__name__}: {exc}")
                    return
                say("R" if not r.is_error else f"E recall {i}: {r.content}")
        say("DONE")

    try:
        anyio.run(run)
    except BaseException as exc:  # noqa: BLE001 - the session itself failed (its server died)
        say(f"E session: {type(exc).__name__}: {exc}")
        ready.put(name)  # never leave the parent waiting (a second put is never read)
    os.close(fd)


def in_flight(path: Path) -> bool:
    """Is the agent's last step a call it sent and has not seen answered?"""
    return read_acks(path).last.startswith("S ")


def wait_in_flight(paths: list[Path], timeout: float = 20) -> Path | None:
    """The first of `paths` caught with a call in flight (polled), None if none was in `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in paths:
            if in_flight(p):
                return p
        time.sleep(0.002)
    return None


@dataclass
class KillOutcome:
    acks: dict[str, AgentAcks]
    killed_agents: list[str]  # SIGKILLed mid-call
    orphans: list[str]  # the agents of the server SIGKILLed mid-call
    survivors: list[str]
    caught_in_flight: dict[str, bool]  # what each kill caught: a call in flight?
    after_kills: dict[str, int]  # per survivor: calls acknowledged after the last kill
    wall: float


def run(
    db: str,
    folder: Path,
    *,
    per_server: int = 2,
    servers: int = 2,
    kill_agents: int = 1,
    seconds: float = 6.0,
    settle: float = 1.0,
    after: float = 1.5,
    config: str = "",
) -> KillOutcome:
    """`servers` servers with `per_server` agents each (+ `kill_agents` extra on the last server);
    after `settle` s kill those agents mid-call, then the first server mid-call, then let the rest
    run `after` s more and stop them."""
    groups = [[f"s{s}-agent-{i}" for i in range(per_server)] for s in range(servers)]
    victims = [f"s{servers - 1}-victim-{i}" for i in range(kill_agents)]
    groups[-1] += victims
    every = [n for g in groups for n in g]
    srv = [McpHttpServer(db, folder, f"server{s}", every, token_of, config=config) for s in range(servers)]
    try:
        for s in srv:
            s.wait_listening()
        ctx = mp.get_context("fork")
        ready, go, stop = ctx.Queue(), ctx.Event(), ctx.Event()
        path = {n: folder / f"{n}.acks" for n in every}
        procs = {
            n: ctx.Process(
                target=agent, args=(srv[s].url, n, str(path[n]), ready, go, stop, seconds), daemon=True
            )
            for s, g in enumerate(groups)
            for n in g
        }
        for p in procs.values():
            p.start()
        for _ in every:
            ready.get(timeout=300)
        t0 = time.monotonic()
        go.set()
        time.sleep(settle)
        caught: dict[str, bool] = {}
        for v in victims:  # an agent killed while its call is in flight
            caught[v] = wait_in_flight([path[v]]) is not None
            procs[v].kill()
        orphans = groups[0]
        hit = wait_in_flight([path[n] for n in orphans])  # a server killed mid-call
        caught["server0"] = hit is not None
        srv[0].kill()
        marks = {n: read_acks(path[n]).lines for n in every}
        time.sleep(after)
        stop.set()
        for p in procs.values():
            p.join(seconds + 120)
        wall = time.monotonic() - t0
    finally:
        for s in srv:
            s.stop()
    acks = {n: read_acks(path[n]) for n in every}
    survivors = [n for g in groups[1:] for n in g if n not in victims]
    after_kills = {n: acks[n].lines - marks[n] for n in survivors}
    return KillOutcome(acks, victims, orphans, survivors, caught, after_kills, wall)


def acknowledged(out: KillOutcome) -> dict[int, str]:
    return {mid: d for a in out.acks.values() for mid, d in a.writes.items()}
