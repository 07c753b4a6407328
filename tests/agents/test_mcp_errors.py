"""A tool that crashes inside (a bug, not bad input) answers one line and the server goes on;
the engine's actor is restored after every call, failed or not."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from console.mcp.server import Door, build
from engine import HashEmbedder, open_engine

from .conftest import rows


async def test_a_crash_is_one_line_and_the_next_call_works(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eng = open_engine(db, embedder=HashEmbedder(), actor="server-default")
    try:
        door = Door(eng, "claude")

        def boom(*a, **k):
            raise RuntimeError("boom\nwith a second line holding internals")

        async with Client(build(door)) as c:
            monkeypatch.setattr(eng, "search", boom)
            r = await c.call_tool("recall", {"query": "x"})
            assert r.is_error
            assert r.content[0].text == "Error executing tool recall"  # type: ignore[union-attr]
            monkeypatch.undo()
            assert eng.actor == "server-default"
            ok = await c.call_tool("remember", {"content": "after the crash"})
            assert not ok.is_error and eng.actor == "server-default"
    finally:
        eng.close()
    assert rows(db, "SELECT actor FROM audit WHERE action = 'add'") == [("claude",)]
