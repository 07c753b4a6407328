"""The Hermes provider, installed by `hermes install-provider` and loaded by hermes-agent 0.19.0's
real loader (`plugins.memory.load_memory_provider`) in Hermes' own venv, against a real engine
file; then `memconsole import hermes` of the same home duplicates nothing."""

from __future__ import annotations

import json
import stat
import subprocess
import time
from pathlib import Path

import pytest

from console.cli import main
from console.hermes.provider import MemconsoleProvider, agent_name
from engine.identity import actor_text, os_user

from .conftest import child_env, rows
from .test_mcp_stdio import TOOLS

HERE = Path(__file__).parent


def install(db: Path, home: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["--db", str(db), "hermes", "install-provider", str(home), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_install_writes_a_private_provider(tmp_path: Path, db: Path, capsys) -> None:
    home = tmp_path / "hermes"
    res = install(db, home, capsys)
    plugin = home / "plugins" / "memconsole"
    assert Path(res["path"]) == plugin / "__init__.py"
    assert res["config_yaml"] == "memory:\n  provider: memconsole"
    assert stat.S_IMODE(plugin.stat().st_mode) == 0o700
    for f in ("__init__.py", "memconsole.json", "plugin.yaml"):
        assert stat.S_IMODE((plugin / f).stat().st_mode) == 0o600
    assert json.loads((plugin / "memconsole.json").read_text())["db"] == str(db)
    assert install(db, home, capsys)["path"]  # the same version again: fine
    (plugin / "__init__.py").write_text("# someone else's\n")
    assert main(["--db", str(db), "hermes", "install-provider", str(home)]) == 2
    assert "--force" in capsys.readouterr().err


def test_hermes_loads_the_provider_and_every_hook_lands(
    tmp_path: Path, db: Path, hermes_python: Path, capsys
) -> None:
    home = tmp_path / "hermes"
    install(db, home, capsys)
    run = subprocess.run(
        [str(hermes_python), str(HERE / "hermes_run.py"), str(home)],
        env=child_env(HERMES_HOME=str(home)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["loaded"] == "_hermes_user_memory.memconsole" and out["available"]
    assert set(out["tools"]) >= TOOLS
    assert out["sync_turn_ms"] < 50  # queued, never written on the turn's thread
    assert out["remember"].get("id", 0) > 0, (out, run.stderr[-2000:])
    assert set(out["bad"]) == {"error"} and "\n" not in out["bad"]["error"]
    assert out["reject"]["rule_id"] > 0
    # Hermes fences the block itself; ours is plain text with rules, rejections and recall
    assert out["prefetch_clean"] and out["fenced"].count("<memory-context>") == 1
    assert "Never deploy on Fridays" in out["prefetch"] and "dark mode" in out["prefetch"]
    assert "Miso" in out["queued_prefetch"]
    assert out["pre_compress"] == ""
    assert out["failures"] == 0, out["last_error"]
    assert out["closed"]

    sessions = rows(db, "SELECT id, agent, source, user, parent_session_id FROM sessions ORDER BY id")
    assert sessions == [
        ("h-1", "hermes", "telegram", "dana", None),
        ("h-2", "hermes", "telegram", "dana", "h-1"),
    ]
    h1 = rows(db, "SELECT role, content, json_extract(metadata, '$.hermes_id') FROM messages"
                  " WHERE session_id = 'h-1' ORDER BY id")  # fmt: skip
    assert [(r, c) for r, c, _ in h1] == [
        ("user", "Which colour theme do I like?"),
        ("assistant", ""),
        ("tool", "[]"),
        ("assistant", "You like dark mode."),
    ]
    assert [i for *_, i in h1] == [1, 2, 3, 4]
    live = rows(db, "SELECT content, tier FROM memories WHERE json_extract(metadata, '$.source') = 'hermes'"
                    " AND category != 'context' ORDER BY id")  # fmt: skip
    assert live == [
        ("Dana prefers dark mode in every editor", "active"),
        ("Staging deploys need a change ticket", "archived"),
        ("Staging deploys need an approved change ticket", "active"),
    ]
    notes = rows(
        db, "SELECT session_id, json_extract(metadata, '$.event') FROM memories WHERE category = 'context'"
    )
    assert notes == [("h-1", "compressed its context"), ("h-2", "ended")]
    # the OS user running Hermes (verified), labelled with the Hermes agent (#27)
    assert {a for (a,) in rows(db, "SELECT DISTINCT actor FROM audit")} == {
        actor_text(os_user(), "hermes:hermes")
    }

    # What Hermes' built-in memory wrote, as files; then the importer reads the same home.
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("Staging deploys need an approved change ticket\n")
    (home / "memories" / "USER.md").write_text("Dana prefers dark mode in every editor\n")
    before = {t: rows(db, f"SELECT count(*) FROM {t}") for t in ("sessions", "messages", "memories")}
    assert main(["--db", str(db), "--actor", "operator", "import", "hermes", str(home), "--json"]) == 0
    capsys.readouterr()
    after = {t: rows(db, f"SELECT count(*) FROM {t}") for t in ("sessions", "messages", "memories")}
    assert after == before


def test_failures_never_reach_the_agent_and_are_counted(tmp_path: Path) -> None:
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "memconsole.json").write_text(json.dumps({"db": str(tmp_path)}))  # a folder
    p = MemconsoleProvider(tmp_path / "plugin")
    p.initialize("s", hermes_home=str(tmp_path), platform="cli")
    assert p.failures == 1 and "initialize" in p.last_error
    p.sync_turn("u", "a", session_id="s")
    assert p.prefetch("q") == ""
    assert {t["name"] for t in p.get_tool_schemas()} == TOOLS  # Hermes routes by name before init
    assert "error" in json.loads(p.handle_tool_call("recall", {"query": "q"}))
    p.on_session_end([])
    p.shutdown()


def test_a_slow_database_never_blocks_the_turn(tmp_path: Path, db: Path) -> None:
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "memconsole.json").write_text(json.dumps({"db": str(db)}))
    p = MemconsoleProvider(tmp_path / "plugin")
    p.initialize("s-1", hermes_home=str(tmp_path), platform="cli", agent_identity="coder")
    assert p.agent == "coder" and p.failures == 0
    real = p.eng.sessions.add_messages

    def slow(*a, **k):
        time.sleep(0.2)
        return real(*a, **k)

    p.eng.sessions.add_messages = slow
    t0 = time.perf_counter()
    for i in range(5):
        p.sync_turn(f"question {i}", f"answer {i}", session_id="s-1")
    assert time.perf_counter() - t0 < 0.1
    assert p.flush(timeout=30)
    p.eng.sessions.add_messages = lambda *a, **k: 1 / 0  # a failing write: logged and counted
    p.sync_turn("q", "a", session_id="s-1")
    assert p.flush(timeout=30) and p.failures == 1 and "ZeroDivisionError" in p.last_error
    p.shutdown()
    # no state.db in this home: the turn texts as given
    assert len(rows(db, "SELECT id FROM messages WHERE session_id = 's-1'")) == 10


def test_agent_names_match_the_importer() -> None:
    assert agent_name("default", Path("/h/.hermes")) == "hermes"
    assert agent_name(None, Path("/h/.hermes/profiles/coder")) == "coder"
    assert agent_name("coder", Path("/h/.hermes/profiles/coder")) == "coder"


def test_the_live_provider_never_brings_back_what_was_forgotten(tmp_path: Path, db: Path) -> None:
    """A session, a turn's text or a MEMORY.md entry forgotten by the operator stays forgotten
    while the agent keeps writing: the provider consults the tombstones as an import does."""
    from engine import HashEmbedder, open_engine

    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "memconsole.json").write_text(json.dumps({"db": str(db)}))
    p = MemconsoleProvider(tmp_path / "plugin")
    p.initialize("s-9", hermes_home=str(tmp_path), platform="cli", agent_identity="coder")
    p.sync_turn("my card number is 4111 1111", "noted", session_id="s-9")
    p.on_memory_write("add", "memory", "The vault code is 8812-alpha")
    assert p.flush(timeout=30) and p.failures == 0
    assert len(rows(db, "SELECT id FROM messages WHERE session_id = 's-9'")) == 2
    with open_engine(db, embedder=HashEmbedder(), actor="operator") as eng:
        eng.forget.run("session", "s-9", "the user asked")
        eng.forget.run("query", "8812-alpha", "the user asked")
    p.sync_turn("my card number is 4111 1111", "noted", session_id="s-9")  # the agent goes on
    p.on_session_switch("s-9")
    p.on_memory_write("add", "memory", "The vault code is 8812-alpha")
    p.sync_turn("a new topic", "sure", session_id="s-10")
    assert p.flush(timeout=30) and p.failures == 0, p.last_error
    p.shutdown()
    assert rows(db, "SELECT id FROM sessions WHERE id = 's-9'") == []
    assert rows(db, "SELECT id FROM messages WHERE session_id = 's-9'") == []
    assert rows(db, "SELECT id FROM memories WHERE content LIKE '%8812-alpha%'") == []
    assert len(rows(db, "SELECT id FROM messages WHERE session_id = 's-10'")) == 2  # others go on
