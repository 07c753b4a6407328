"""One `memconsole mcp --http` server on PostgreSQL runs two tokens' calls at the same time (no
process-wide lock; real MCP client SDK): both recalls are inside the database at once (each waits
on a row another session holds), and each recall is audited under its own token's actor."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import psycopg

from engine import FixedClock, HashEmbedder, open_engine

from .conftest import RW_TOKEN, TOKENS, free_port, http_server, write_tokens
from .test_mcp_http import client

OTHER = "second-token-0123456789ab"


def _waiting(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as c:
        return int(
            c.execute(
                # Waiting on the held row (a global writers' lock would show as 'advisory').
                "SELECT count(DISTINCT pid) FROM pg_locks WHERE NOT granted"
                " AND locktype IN ('transactionid', 'tuple')"
            ).fetchone()[0]
        )


def _until_both_wait(url: str, timeout: float = 30.0) -> int:
    deadline, most = time.monotonic() + timeout, 0
    while time.monotonic() < deadline and most < 2:
        most = max(most, _waiting(url))
        time.sleep(0.05)
    return most


async def test_two_tokens_recall_at_once_each_audited_as_itself(tmp_path: Path, pg_url: str) -> None:
    seed = open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock("2026-01-01T00:00:00Z"), load="now")
    mid = seed.add_memory("deploys go through the blue pipeline")
    seed.close()
    port = free_port()
    tokens = write_tokens(tmp_path / "tokens", TOKENS + f"{OTHER} other\n")
    with http_server(pg_url, tokens, port), psycopg.connect(pg_url) as holder:  # type: ignore[arg-type]
        url = f"http://127.0.0.1:{port}/mcp"
        async with client(url, RW_TOKEN) as rw, client(url, OTHER) as other:
            # Another session holds the hit's row: each recall's access waits on it, inside the db.
            holder.execute("SELECT 1 FROM memories WHERE id = %s FOR UPDATE", [mid])
            calls = [
                asyncio.create_task(c.call_tool("recall", {"query": "blue pipeline"})) for c in (rw, other)
            ]
            both = await asyncio.to_thread(_until_both_wait, pg_url)
            holder.commit()
            results = await asyncio.gather(*calls)
        assert both == 2, "the two tokens' calls were never in the database at the same time"
        assert not any(r.is_error for r in results), [r.content for r in results]
        with psycopg.connect(pg_url, autocommit=True) as c:
            actors = sorted(
                r[0] for r in c.execute("SELECT actor FROM audit WHERE action = 'access'").fetchall()
            )
    assert actors == ["laptop", "other"]  # one audit row per recall, under its own token's actor
