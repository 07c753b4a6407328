"""`memconsole mcp --http` behind bearer tokens: 401 without one, 403 with a wrong one, a
read-only token reads but never writes, and each token's writes are audited under its actor,
even when callers write concurrently."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .conftest import RO_TOKEN, RW_TOKEN, TOKENS, free_port, http_server, rows, write_tokens

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def client(url: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60)


@pytest.fixture
def served(tmp_path: Path, db: Path):
    port = free_port()
    tokens = write_tokens(tmp_path / "tokens", TOKENS + "second-token-0123456789ab other\n")
    with http_server(db, tokens, port):
        yield f"http://127.0.0.1:{port}/mcp"


async def test_http_tokens_gate_and_identity(served: str, db: Path) -> None:
    async with httpx2.AsyncClient(timeout=30) as raw:
        assert (await raw.post(served, json=INIT, headers=HEADERS)).status_code == 401
        wrong = {**HEADERS, "Authorization": "Bearer not-a-token-0123456789"}
        assert (await raw.post(served, json=INIT, headers=wrong)).status_code == 403
        basic = {**HEADERS, "Authorization": "Basic " + RW_TOKEN}
        assert (await raw.post(served, json=INIT, headers=basic)).status_code == 401
        ok = {**HEADERS, "Authorization": f"Bearer {RW_TOKEN}"}
        assert (await raw.post(served, json=INIT, headers=ok)).status_code == 200

    async with (
        client(served, RW_TOKEN) as rw,
        client(served, RO_TOKEN) as ro,
        client(served, "second-token-0123456789ab") as other,
    ):
        mid = await rw.call_tool("remember", {"content": "Deploys go through the blue pipeline"})
        assert not mid.is_error
        # Concurrent writers: each memory audited under the token that wrote it.
        calls = [
            c.call_tool("remember", {"content": f"note {i} written by {name}"})
            for i in range(6)
            for name, c in (("laptop", rw), ("other", other))
        ]
        results = await asyncio.gather(*calls)
        assert not any(r.is_error for r in results)

        seen = await ro.call_tool("recall", {"query": "blue pipeline"})
        assert not seen.is_error and seen.structured_content["hits"]
        denied = await ro.call_tool("remember", {"content": "a viewer tries to write"})
        assert denied.is_error and "read-only" in denied.content[0].text  # type: ignore[union-attr]
        denied = await ro.call_tool("log_message", {"session_id": "v", "role": "user", "content": "x"})
        assert denied.is_error

    assert rows(db, "SELECT count(*) FROM memories WHERE content LIKE 'a viewer%'") == [(0,)]
    assert rows(db, "SELECT count(*) FROM sessions") == [(0,)]
    adds = rows(
        db,
        "SELECT a.actor, m.content FROM audit a JOIN memories m ON m.id = CAST(a.target_id AS INT)"
        " WHERE a.action = 'add' AND a.target_kind = 'memory'",
    )
    for actor, content in adds:
        if content.startswith("note "):
            assert content.endswith(f"written by {actor}"), (actor, content)
    assert len(adds) == 13
    actors = {a for (a,) in rows(db, "SELECT DISTINCT actor FROM audit")}
    assert actors == {"laptop", "other"}  # the viewer's recall recorded nothing; never "operator"
