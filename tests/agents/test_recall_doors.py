"""Each door an agent recalls through writes one recall-log row (issue #26): the real MCP server
over stdio driven by the mcp SDK's client, the Hermes provider's prefetch, and `memconsole search`
(which records access); an operator's `search --no-access` writes none. Both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from console.cli import main
from console.hermes.provider import MemconsoleProvider
from engine import HashEmbedder, open_engine
from engine.identity import parse_actor

from .conftest import MEMCONSOLE, child_env

pytestmark = pytest.mark.backends


def logged(db_path) -> list:
    with open_engine(db_path, embedder=None) as eng:
        return eng.recalls.list()


def seed(db_path) -> int:
    with open_engine(db_path, embedder=HashEmbedder(), actor="seed") as eng:
        eng.add_memory("Dana keeps the spare office key under the blue plant pot", agent="atlas")
        return eng.add_memory("The staging database password rotates every Monday", agent="atlas")


async def test_mcp_recall_writes_one_log_row_under_the_callers_identity(db_path) -> None:
    mid = seed(db_path)
    params = StdioServerParameters(
        command=MEMCONSOLE, args=["--db", str(db_path), "--actor", "claude-code", "mcp"], env=child_env()
    )
    async with Client(params, read_timeout_seconds=60) as c:
        r = await c.call_tool("recall", {"query": "staging database password", "k": 2, "agent": "atlas"})
        assert not r.is_error
        returned = [h["id"] for h in r.structured_content["hits"]]
    assert returned[0] == mid
    (rec,) = logged(db_path)
    # Over stdio the server runs as the OS user: --actor is a label beside it (engine/identity.py).
    assert (rec.door, parse_actor(rec.actor).label, rec.agent, rec.query, rec.k) == (
        "mcp", "claude-code", "atlas", "staging database password", 2,
    )  # fmt: skip
    assert rec.hit_ids == returned and rec.filters["agent"] == "atlas"
    assert rec.latency_ms is not None and rec.model.startswith("hash")


def test_hermes_prefetch_writes_one_log_row_for_its_agent(tmp_path: Path, db_path) -> None:
    mid = seed(db_path)
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "memconsole.json").write_text(json.dumps({"db": str(db_path), "recall_k": 3}))
    p = MemconsoleProvider(tmp_path / "plugin")
    p.initialize("h-1", hermes_home=str(tmp_path), platform="cli", agent_identity="coder")
    try:
        block = p.prefetch("spare office key blue plant", session_id="h-1")
        assert p.failures == 0, p.last_error
    finally:
        p.shutdown()
    assert "blue plant pot" in block
    (rec,) = logged(db_path)
    assert (rec.door, rec.agent, rec.query, rec.k) == ("hermes", "coder", "spare office key blue plant", 3)
    assert rec.hit_ids and rec.hit_ids[0] != mid


def test_cli_search_with_access_is_logged_and_without_is_not(db_path, capsys) -> None:
    mid = seed(db_path)
    db = str(db_path)
    assert main(["--db", db, "search", "staging password", "--mode", "keyword", "--no-access", "--json"]) == 0
    assert logged(db_path) == []
    assert (
        main(["--db", db, "--actor", "ops", "search", "staging password", "--mode", "keyword", "--json"]) == 0
    )
    (rec,) = logged(db_path)
    assert (rec.door, parse_actor(rec.actor).label, rec.mode, rec.hit_ids) == ("cli", "ops", "keyword", [mid])
    capsys.readouterr()
    assert main(["--db", db, "recalls", "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [rec.id]
    assert main(["--db", db, "recall", "show", str(rec.id), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["query"] == "staging password" and shown["hits"][0]["id"] == mid
    assert main(["--db", db, "recall", "show", "999"]) == 2
    assert "no logged recall" in capsys.readouterr().err
