"""Issue #24, found by the fleet bench's MCP path (`make stress`: ~40 s): a `memconsole mcp --http`
server on PostgreSQL runs more tool calls at once than its pool has connections; a call past the
pool used to wait inside psycopg_pool and fail after its 30 s deadline ("couldn't get a connection
after 30.00 sec") — an error reaching an agent only because others were slow. Now the door lets
in at most `[mcp] engine_calls` (default: the pool's size) and the rest wait their turn there.

Here: pool_size = 1, one recall stuck 35 s behind a table lock another session holds (every read
of `memories` waits), a second recall queued behind it; both must answer, neither an error."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import psycopg

from engine import HashEmbedder, open_engine
from tests.agents.conftest import RW_TOKEN, TOKENS, free_port, write_tokens
from tests.agents.door_helpers import client

HOLD_S = 35.0  # past psycopg_pool's 30 s getconn deadline


async def test_a_call_queued_past_the_pool_waits_its_turn_instead_of_failing(
    tmp_path: Path, pg_url: str
) -> None:
    seed = open_engine(pg_url, embedder=HashEmbedder(), load="now")
    seed.add_memory("deploys go through the blue pipeline")
    seed.close()
    port = free_port()
    tokens = write_tokens(tmp_path / "tokens", TOKENS)
    with _server(pg_url, tokens, port, tmp_path), psycopg.connect(pg_url) as holder:
        url = f"http://127.0.0.1:{port}/mcp"
        async with client(url, RW_TOKEN) as a, client(url, RW_TOKEN) as b:
            warm = await a.call_tool("recall", {"query": "blue pipeline"})
            assert not warm.is_error, warm.content
            holder.execute("LOCK TABLE memories IN ACCESS EXCLUSIVE MODE")
            t0 = time.monotonic()
            first = asyncio.create_task(a.call_tool("recall", {"query": "blue pipeline"}))
            await asyncio.sleep(1.0)
            second = asyncio.create_task(b.call_tool("recall", {"query": "pipeline"}))
            await asyncio.sleep(HOLD_S)
            holder.commit()
            results = await asyncio.gather(first, second)
            took = time.monotonic() - t0
    assert [r.is_error for r in results] == [False, False], [r.content for r in results]
    assert all(r.structured_content and r.structured_content["hits"] for r in results)
    assert took >= HOLD_S  # both really waited past the pool's deadline


def _server(url: str, tokens: Path, port: int, tmp_path: Path):
    """`memconsole mcp --http` on the PostgreSQL database with a one-connection pool."""
    import subprocess

    from tests.agents.conftest import MEMCONSOLE, child_env, listening

    cfg = tmp_path / "pool1.toml"
    cfg.write_text("[postgres]\npool_size = 1\n")
    proc = subprocess.Popen(
        [MEMCONSOLE, "--db", url, "--actor", "operator", "mcp", "--http", f"127.0.0.1:{port}",
         "--token-file", str(tokens)],
        env=child_env(MEMCONSOLE_CONFIG=str(cfg)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    return listening(proc, port)
