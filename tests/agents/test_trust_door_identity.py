"""Who acts through the door: a token acts for the agents its line names (refusals audited), calls
from different tokens run at the same time under their own names (no lock around a call), and a
lookalike actor name never gets into the token file."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from console.mcp.auth import TokenFileError, TokenSource, parse_tokens
from console.mcp.server import Door
from engine import HashEmbedder, open_engine

from .conftest import RW_TOKEN, TOKENS, free_port, http_server, rows, write_tokens
from .door_helpers import client

CI_TOKEN = "ci-token-0123456789abcdef"
BOUND = TOKENS + f"{CI_TOKEN} ci-runner agents=build,deploy\n"


def _text(r: Any) -> str:
    return str(r.content[0].text)


async def test_a_token_acts_only_for_its_agents_and_refusals_are_audited(tmp_path: Path, db: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with http_server(db, write_tokens(tmp_path / "tokens", BOUND), port):
        async with client(url, RW_TOKEN) as laptop, client(url, CI_TOKEN) as ci:
            assert not (await laptop.call_tool("remember", {"content": "own", "agent": "laptop"})).is_error
            assert not (await laptop.call_tool("remember", {"content": "no agent named"})).is_error
            assert not (await ci.call_tool("remember", {"content": "for deploy", "agent": "deploy"})).is_error
            for who, tool, args in [
                (laptop, "remember", {"content": "as deploy", "agent": "deploy"}),
                (ci, "remember", {"content": "as laptop", "agent": "laptop"}),
                (laptop, "reject", {"text": "no friday deploys", "agent": "deploy"}),
                (laptop, "gate_post", {"outcome": "pass", "summary": "done", "agent": "deploy"}),
                (
                    laptop,
                    "log_message",
                    {"session_id": "s1", "role": "user", "content": "x", "agent": "deploy"},
                ),
            ]:
                r = await who.call_tool(tool, args)
                assert r.is_error and "may not act for agent" in _text(r) and "\n" not in _text(r), (tool, r)
            # Logging into a session another agent owns is acting for that agent.
            opened = {"session_id": "s2", "role": "user", "content": "hello", "agent": "deploy"}
            assert not (await ci.call_tool("log_message", opened)).is_error
            r = await laptop.call_tool(
                "log_message", {"session_id": "s2", "role": "user", "content": "hijack"}
            )
            assert r.is_error and "'deploy'" in _text(r)
    assert rows(db, "SELECT count(*) FROM memories WHERE content LIKE 'as %'") == [(0,)]
    assert rows(db, "SELECT count(*) FROM messages WHERE content = 'hijack'") == [(0,)]
    refused = rows(db, "SELECT actor, target_kind, target_id FROM audit WHERE action = 'refused' ORDER BY id")
    assert refused == [
        ("laptop", "agent", "deploy"),
        ("ci-runner", "agent", "laptop"),
        ("laptop", "agent", "deploy"),
        ("laptop", "agent", "deploy"),
        ("laptop", "agent", "deploy"),
        ("laptop", "agent", "deploy"),
    ]
    # The console shows who actually wrote beside the agent: the audit row holds the token's actor.
    assert rows(
        db,
        "SELECT a.actor, m.agent FROM audit a JOIN memories m ON m.id = CAST(a.target_id AS INT)"
        " WHERE a.action = 'add' AND m.content = 'for deploy'",
    ) == [("ci-runner", "deploy")]


def test_two_slow_calls_from_different_tokens_overlap_each_under_its_name(tmp_path: Path) -> None:
    """No engine-wide lock around a call: two 0.6 s calls take about 0.6 s together, and each
    sees (and would audit under) its own caller, while the engine's default is untouched."""
    tokens = TokenSource(write_tokens(tmp_path / "tokens", TOKENS + f"{CI_TOKEN} ci-runner\n"))
    eng = open_engine(tmp_path / "m.db", embedder=HashEmbedder(), actor="server-default")
    door = Door(eng, "server-default", tokens)
    seen: dict[str, list[str]] = {}
    inside = threading.Barrier(2, timeout=5)  # both calls are inside the door at once, or this fails

    def slow(_eng: Any, who: Any) -> None:
        seen[who.actor] = [eng.actor]
        inside.wait()
        time.sleep(0.6)
        seen[who.actor].append(eng.actor)

    def call(token: str) -> None:
        door.run(SimpleNamespace(headers={"authorization": f"Bearer {token}"}), slow)  # type: ignore[arg-type]

    try:
        t0 = time.monotonic()
        threads = [threading.Thread(target=call, args=(t,)) for t in (RW_TOKEN, CI_TOKEN)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
        assert seen == {"laptop": ["laptop", "laptop"], "ci-runner": ["ci-runner", "ci-runner"]}
        assert elapsed < 1.1, elapsed  # overlapped (serialized would be >= 1.2 s)
        assert eng.actor == "server-default"
    finally:
        eng.close()


@pytest.mark.parametrize(
    "line, why",
    [
        (f"{RW_TOKEN} d\u0430na", "mixes scripts"),  # Cyrillic а: a lookalike of dana
        (f"{RW_TOKEN} dana\u200b", "invisible"),
        (f"{RW_TOKEN} dana agents=d\u0430na", "mixes scripts"),
        (f"{RW_TOKEN} dana agents=", "at least one agent"),
        (f"{RW_TOKEN} dana read-only read-only", "neither"),
    ],
)
def test_token_file_refuses_lookalike_names(line: str, why: str) -> None:
    with pytest.raises(TokenFileError, match=why):
        parse_tokens(line + "\n")


def test_token_file_normalises_and_binds() -> None:
    found = parse_tokens(f"{RW_TOKEN} ｄａｎａ ro agents=build,*\n")[RW_TOKEN]
    assert (found.actor, found.read_only, found.agents) == ("dana", True, {"build", "*"})
    assert found.may_act_for("anyone")
    only = parse_tokens(f"{RW_TOKEN} dana\n")[RW_TOKEN]
    assert only.may_act_for("dana") and only.may_act_for("") and not only.may_act_for("bob")


async def test_the_console_shows_who_wrote_beside_the_agent(tmp_path: Path) -> None:
    from textual.widgets import Static

    from tests.screens.helpers import make_app, settle

    eng = open_engine(tmp_path / "m.db", embedder=HashEmbedder(), actor="operator")
    try:
        with eng.acting_as("ci-runner"):  # as the door records a token's write
            eng.add_memory("zebracanary deploys need two approvals", agent="deploy", dedup=False)
        app = make_app(eng)
        async with app.run_test(size=(160, 40)) as pilot:
            await settle(app, pilot)
            await pilot.press("2", "slash", *"zebracanary", "enter")
            await settle(app, pilot)
            await pilot.pause()
            detail = " ".join(str(w.render()) for w in app.pane("search").query(Static))
            assert "agent deploy (written by ci-runner)" in detail
    finally:
        eng.close()
