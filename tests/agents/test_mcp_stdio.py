"""`memconsole --db X mcp` over stdio, driven by the mcp SDK's own client; the database checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from engine.identity import actor_text, os_user

from .conftest import MEMCONSOLE, child_env, rows

TOOLS = {
    "remember",
    "recall",
    "explain",
    "boot",
    "gate_pre",
    "gate_post",
    "flow_check",
    "reject",
    "log_message",
}


def server(db: Path, actor: str = "claude-code") -> Client:
    params = StdioServerParameters(
        command=MEMCONSOLE, args=["--db", str(db), "--actor", actor, "mcp"], env=child_env()
    )
    return Client(params, read_timeout_seconds=60)


async def test_stdio_tools_write_what_the_console_reads(db: Path) -> None:
    async with server(db) as c:
        listed = await c.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        for t in listed.tools:  # JSON-schema'd arguments and typed results
            assert t.input_schema["type"] == "object" and t.output_schema, t.name

        r = await c.call_tool(
            "remember",
            {
                "content": "The user prefers dark mode in every editor",
                "agent": "atlas",
                "category": "preference",
            },
        )
        assert not r.is_error
        mid = r.structured_content["id"]
        again = await c.call_tool(
            "remember",
            {
                "content": "The user prefers dark mode in every editor",
                "agent": "atlas",
                "category": "preference",
            },
        )
        assert again.structured_content == {"id": mid, "deduplicated": True}

        hit = (await c.call_tool("recall", {"query": "dark mode editor", "k": 3})).structured_content
        assert hit["hits"][0]["id"] == mid
        assert {"bm25_rank", "vector_rank", "rrf", "strength", "final"} <= set(hit["hits"][0]["breakdown"])

        why = (await c.call_tool("explain", {"query": "dark mode", "memory_id": mid})).structured_content
        assert why["found"] and why["in_top_k"]

        rej = await c.call_tool("reject", {"text": "Never deploy on Fridays", "agent": "atlas"})
        ids = rej.structured_content
        boot = (await c.call_tool("boot", {"agent": "atlas"})).structured_content
        assert "Never deploy on Fridays" in boot["text"] and boot["text"].startswith("<memory-context")
        pre = (await c.call_tool("gate_pre", {"text": "deploy the api", "agent": "atlas"})).structured_content
        assert [x["id"] for x in pre["rejections"]] == [ids["memory_id"]]
        post = (
            await c.call_tool("gate_post", {"outcome": "pass", "summary": "api deployed", "agent": "atlas"})
        ).structured_content
        assert post["state_memory_id"] > 0
        assert (await c.call_tool("flow_check", {"text": "deploy"})).structured_content["matches"] == []

        first = (
            await c.call_tool(
                "log_message", {"session_id": "cc-1", "role": "user", "content": "hello", "agent": "atlas"}
            )
        ).structured_content
        second = (
            await c.call_tool("log_message", {"session_id": "cc-1", "role": "assistant", "content": "hi"})
        ).structured_content
        assert first["created_session"] and not second["created_session"]

        res = await c.read_resource("memconsole://rules")
        assert "Never deploy on Fridays" in res.contents[0].text  # type: ignore[union-attr]
        boot_res = await c.read_resource("memconsole://boot/atlas")
        assert "Never deploy on Fridays" in boot_res.contents[0].text  # type: ignore[union-attr]

    assert rows(db, "SELECT agent, category FROM memories WHERE id = ?", (mid,)) == [("atlas", "preference")]
    assert rows(db, "SELECT role, content FROM messages WHERE session_id = 'cc-1' ORDER BY id") == [
        ("user", "hello"),
        ("assistant", "hi"),
    ]
    actors = {a for (a,) in rows(db, "SELECT DISTINCT actor FROM audit")}
    # every write under the connection's identity: the local OS user, labelled with --actor (#27)
    assert actors == {actor_text(os_user(), "claude-code")}
    acts = {a for (a,) in rows(db, "SELECT action FROM audit")}
    assert {"add", "access", "add-messages"} <= acts  # recall counted as the agent's access


async def test_bad_arguments_are_one_line_tool_errors_and_the_server_lives(db: Path) -> None:
    async with server(db) as c:
        bad: list[tuple[str, dict[str, Any]]] = [
            ("recall", {"query": "x", "k": "many"}),
            ("recall", {"query": "x", "k": 0}),
            ("remember", {"content": "x", "kind": "bogus"}),
            ("remember", {"content": "x", "importance": 7}),
            ("remember", {"content": ""}),
            ("remember", {}),
            ("explain", {"query": "x", "memory_id": 2**70}),
            ("gate_post", {"outcome": "maybe", "summary": "s"}),
            ("log_message", {"session_id": "s", "role": "robot", "content": "c"}),
            ("reject", {"text": "   "}),
            ("no_such_tool", {}),
        ]
        for name, args in bad:
            r = await c.call_tool(name, args)
            assert r.is_error, (name, args)
            text = r.content[0].text  # type: ignore[union-attr]
            assert text and "\n" not in text and "Traceback" not in text, (name, text)
        ok = await c.call_tool("remember", {"content": "still alive"})
        assert not ok.is_error
    assert rows(db, "SELECT content FROM memories") == [("still alive",)]
