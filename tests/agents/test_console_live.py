"""Two agents write while the console is open — one through `memconsole mcp` (stdio, another
process), one through the Hermes provider — and the Sessions pane shows both within 2 s."""

from __future__ import annotations

import json
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

from console.app import MemConsole
from console.app.widgets.table import DataGrid
from console.hermes.provider import MemconsoleProvider
from engine import HashEmbedder, open_engine

from .conftest import MEMCONSOLE, child_env


def has_row(grid: DataGrid, key: str) -> bool:
    try:
        grid.get_row_index(key)
        return True
    except Exception:
        return False


async def test_console_shows_both_agents_within_two_seconds(tmp_path: Path, db: Path) -> None:
    eng = open_engine(db, embedder=HashEmbedder(), actor="operator")
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "memconsole.json").write_text(json.dumps({"db": str(db)}))
    hermes = MemconsoleProvider(tmp_path / "plugin")
    app = MemConsole(eng, poll_interval=0.5, start_embedder=False, db_label="test.db")
    params = StdioServerParameters(
        command=MEMCONSOLE, args=["--db", str(db), "--actor", "claude", "mcp"], env=child_env()
    )
    try:
        async with app.run_test(size=(120, 40)) as pilot, Client(params, read_timeout_seconds=60) as mcp:
            grid = app.query_one("#session-list", DataGrid)
            await pilot.pause(0.6)
            assert grid.row_count == 0

            hermes.initialize("hermes-live-1", hermes_home=str(tmp_path), platform="telegram")
            r = await mcp.call_tool(
                "log_message",
                {"session_id": "mcp-live-1", "role": "user", "content": "deploy the api", "agent": "claude"},
            )
            assert not r.is_error
            hermes.sync_turn("what did we decide?", "blue-green deploys", session_id="hermes-live-1")
            assert hermes.flush(timeout=10)
            written = time.monotonic()
            while not (has_row(grid, "mcp-live-1") and has_row(grid, "hermes-live-1")):
                assert time.monotonic() - written < 2.0, "the console did not show both agents in 2 s"
                await pilot.pause(0.05)
            assert app.errors == []
    finally:
        hermes.shutdown()
        eng.close()
