"""Identity from the environment, not a flag (#27): the verified caller is the OS user (SQLite),
`current_user` (PostgreSQL) or an MCP token's actor; `--actor` is a label recorded beside it."""

from __future__ import annotations

import os
import pwd

import pytest

from console.cli import main
from engine import open_engine
from engine.embed import HashEmbedder
from engine.identity import actor_text, os_user, parse_actor

pytestmark = pytest.mark.backends


def test_actor_text_round_trips():
    assert actor_text("alice") == "alice" and actor_text("alice", "alice") == "alice"
    assert actor_text("alice", "ops-lead") == "alice (as ops-lead)"
    p = parse_actor("alice (as night shift (b))")
    assert (p.verified, p.label) == ("alice", "night shift (b)")
    assert parse_actor("dana").label is None and parse_actor("dana").verified == "dana"


def test_os_user_ignores_the_environment(monkeypatch):
    monkeypatch.setenv("USER", "mallory")
    monkeypatch.setenv("LOGNAME", "mallory")
    monkeypatch.setenv("USERNAME", "mallory")
    assert os_user() == pwd.getpwuid(os.getuid()).pw_name != "mallory"


def _verified_name(db_path) -> str:
    with open_engine(db_path, embedder=None) as eng:
        return eng.identity.verified


def test_actor_flag_cannot_forge_an_identity(db_path, backend, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    monkeypatch.setenv("USER", "mallory")
    db = str(db_path)
    assert main(["--db", db, "--actor", "mallory", "add", "deploys need a ticket", "--json"]) == 0
    with open_engine(db, embedder=None) as eng:
        rows = eng.audit.log(action="add")
        me = eng.identity
    assert rows, "the add was audited"
    expected = "postgres" if backend == "postgres" else pwd.getpwuid(os.getuid()).pw_name
    assert me.verified == expected and me.source == ("pg" if backend == "postgres" else "os")
    for r in rows:
        who = parse_actor(r.actor)
        assert who.verified == expected != "mallory"
        assert who.label == "mallory"
        assert r.actor == f"{expected} (as mallory)"


def test_token_path_records_the_tokens_actor(db_path, backend):
    with open_engine(db_path, embedder=HashEmbedder(), label="console-label") as eng:
        with eng.acting_as("ci-runner"):  # how the MCP door runs a token's call
            mid = eng.add_memory("the token wrote this")
            assert eng.identity.source == "token"
        row = eng.audit.log(target=f"memory:{mid}")[0]
        assert parse_actor(row.actor).verified == "ci-runner" and parse_actor(row.actor).label is None
        assert eng.actor.endswith("(as console-label)")  # outside the block: the engine's own caller
