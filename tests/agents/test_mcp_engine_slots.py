"""The MCP door lets at most `[mcp] engine_calls` tool calls into the engine at once (default: the
connection pool's size); the others wait their turn in the door, without a deadline (issue #24:
past the pool they used to fail after psycopg_pool's 30 s; the full proof on PostgreSQL is
tests/stress/test_mcp_pool_queue.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from console.mcp.server import Door
from engine import HashEmbedder, open_engine


def test_calls_past_engine_calls_wait_their_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[mcp]\nengine_calls = 2\n")
    monkeypatch.setenv("MEMCONSOLE_CONFIG", str(cfg))
    eng = open_engine(tmp_path / "m.db", embedder=HashEmbedder(), load="now")
    try:
        door = Door(eng, "agent")
        assert door.slots == 2
        release = threading.Event()
        inside, most, lock = [0], [0], threading.Lock()

        def call(e, _who) -> object:
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            try:
                release.wait(10)
                return e.counts()  # a real engine call on the way out
            finally:
                with lock:
                    inside[0] -= 1

        threads = [threading.Thread(target=door.run, args=(None, call)) for _ in range(5)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        assert inside[0] == 2  # two in the engine, three waiting in the door
        release.set()
        for t in threads:
            t.join(10)
        assert most[0] == 2 and inside[0] == 0
    finally:
        eng.close()


def test_default_follows_the_pool(tmp_path: Path) -> None:
    eng = open_engine(tmp_path / "m.db", embedder=HashEmbedder(), load="now")
    try:
        assert Door(eng, "agent").slots == eng.settings.postgres.pool_size
    finally:
        eng.close()
