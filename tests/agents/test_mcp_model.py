"""With the real model loaded once in the server, recall finds by meaning (no shared words)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from .conftest import MEMCONSOLE, child_env


@pytest.mark.model
async def test_recall_by_meaning_with_the_model_loaded_once(db: Path) -> None:
    env = {k: v for k, v in child_env().items() if k != "MEMCONSOLE_EMBEDDER"}  # the default model
    params = StdioServerParameters(command=MEMCONSOLE, args=["--db", str(db), "mcp"], env=env)
    async with Client(params, read_timeout_seconds=120) as c:
        for text in (
            "The user prefers dark mode in every editor",
            "Invoices are sent on the first Monday",
            "The staging cluster runs in eu-west-1",
            "Standup moved to 9:30",
        ):
            assert not (await c.call_tool("remember", {"content": text})).is_error
        deadline = time.monotonic() + 90
        while True:
            r = await c.call_tool("recall", {"query": "which colour scheme does she like?", "k": 2})
            res = r.structured_content
            if res["mode"] == "hybrid" or time.monotonic() > deadline:
                break
            await anyio.sleep(0.3)
        assert res["mode"] == "hybrid"
        top = res["hits"][0]
        assert top["content"] == "The user prefers dark mode in every editor"
        assert top["breakdown"]["bm25_rank"] is None and top["breakdown"]["vector_rank"] == 1
        t0 = time.perf_counter()
        await c.call_tool("recall", {"query": "where does staging run?", "k": 3})
        assert time.perf_counter() - t0 < 2.0  # milliseconds in practice: no model load per call
