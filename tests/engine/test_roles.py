"""Roles the engine enforces (#27): every public engine call is listed with the role it needs,
and a caller without it is refused in one line, audited as `refused`, on every door."""

from __future__ import annotations

import inspect
import os

import pytest

from console.cli import main
from engine import open_engine
from engine.embed import HashEmbedder
from engine.errors import Refused
from engine.roles import FACADE, POLICY, Role
from engine.storage.sqlite.operators import operators_path

NOBODY = 65534  # another OS user owns the database: this process is not its owner

NOUNS = (
    "memories", "sessions", "retrieval", "decay", "rules", "flows", "audit", "operators",
    "boot", "gates", "importers", "curator", "forget", "health", "recalls", "checks",
)  # fmt: skip


def _public(obj: object) -> list[str]:
    return [n for n, v in inspect.getmembers(type(obj)) if not n.startswith("_") and callable(v)]


def test_every_public_engine_call_is_guarded(tmp_path):
    """A verb added later fails here until POLICY says which role it needs."""
    with open_engine(tmp_path / "m.db", embedder=None) as eng:
        for noun in NOUNS:
            svc = getattr(eng, noun)
            for name in _public(svc):
                key = f"{noun}.{name}"
                assert key in POLICY, f"{key} is not in engine/roles.py POLICY: which role does it need?"
                if POLICY[key] != Role.VIEWER:  # a mutating call is wrapped on the live service
                    assert getattr(getattr(svc, name), "__memconsole_needs__", None) == key, key
        for name in _public(eng):
            assert name in FACADE, f"MemoryEngine.{name} is not in engine/roles.py FACADE"
            if FACADE[name] is not None:
                assert FACADE[name] in POLICY


@pytest.fixture
def foreign_db(tmp_path):
    """A database owned by another OS user, made by us (root) first: we are a mere viewer of it."""
    if os.getuid() != 0:
        pytest.skip("needs root to hand the database to another OS user")
    db = tmp_path / "m.db"
    with open_engine(db, embedder=HashEmbedder()) as eng:
        eng.add_memory("deploys need a change ticket")
    for p in tmp_path.iterdir():
        os.chown(p, NOBODY, NOBODY)
    return db


def test_viewer_is_refused_and_the_refusal_audited(foreign_db):
    with open_engine(foreign_db, embedder=HashEmbedder(), label="mallory") as eng:
        assert eng.operators.whoami().role == "viewer"
        assert eng.search("change ticket").hits  # reading is allowed
        with pytest.raises(Refused, match="memories.pin needs the curator role; root is viewer"):
            eng.memories.pin(1)
        with pytest.raises(Refused, match="forget officer"):
            eng.forget.open("deploys")
        with pytest.raises(Refused, match="admin"):
            eng.health.doctor(repair=True)
        eng.health.doctor()  # without --repair: a read
        refused = eng.audit.log(action="refused")
        assert [r.target_id for r in refused][:3] == ["health.doctor", "forget.open", "memories.pin"]
        assert refused[-1].actor == "root (as mallory)" and refused[-1].summary["needs"] == "curator"
        assert not eng.memories.get(1).pinned


def test_viewer_search_records_no_access(foreign_db):
    with open_engine(foreign_db, embedder=HashEmbedder()) as eng:
        before = eng.memories.get(1).access_count
        eng.search("change ticket", record_access=True)
        assert eng.memories.get(1).access_count == before
        assert not eng.audit.log(action="access*")


def test_operators_file_grants_roles(foreign_db):
    path = operators_path(foreign_db)
    path.write_text('[operators]\nroot = "curator"\n')
    os.chown(path, NOBODY, NOBODY)
    os.chmod(path, 0o600)
    with open_engine(foreign_db, embedder=HashEmbedder()) as eng:
        eng.memories.pin(1)  # curator
        assert eng.memories.get(1).pinned
        with pytest.raises(Refused, match="forget officer"):
            eng.forget.open("deploys")
    os.chmod(path, 0o644)  # readable by others: no longer trusted
    with open_engine(foreign_db, embedder=HashEmbedder()) as eng, pytest.raises(Refused, match="not trusted"):
        eng.memories.unpin(1)
    os.chmod(path, 0o600)
    os.chown(path, 0, 0)  # not the database owner's: not trusted either
    with open_engine(foreign_db, embedder=HashEmbedder()) as eng, pytest.raises(Refused, match="not trusted"):
        eng.memories.unpin(1)


def test_cli_refusal_is_one_line_and_non_zero(foreign_db, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    assert main(["--db", str(foreign_db), "memory", "pin", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "needs the curator role" in err
    assert main(["--db", str(foreign_db), "operators", "grant", "dana", "curator"]) == 2
    assert "needs the admin role" in capsys.readouterr().err


def test_admin_grants_and_revokes_through_the_cli(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    db = str(tmp_path / "m.db")
    assert main(["--db", db, "operators", "grant", "dana", "forget-officer", "--json"]) == 0
    assert '"roles":["forget"]' in capsys.readouterr().out.replace(" ", "")
    path = operators_path(tmp_path / "m.db")
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert main(["--db", db, "operators", "list", "--json"]) == 0
    assert '"dana"' in capsys.readouterr().out
    assert main(["--db", db, "operators", "revoke", "dana", "forget"]) == 0
    assert main(["--db", db, "operators", "grant", "dana", "agent"]) == 2  # not an operator role
    assert main(["--db", db, "whoami", "--json"]) == 0
    assert '"role":"admin"' in capsys.readouterr().out.replace(" ", "")
    with open_engine(db, embedder=None) as eng:
        assert [r.action for r in eng.audit.log(action="operator-*")] == ["operator-revoke", "operator-grant"]


def test_token_caller_is_an_agent(tmp_path):
    with open_engine(tmp_path / "m.db", embedder=HashEmbedder()) as eng:
        mid = eng.add_memory("a fact")
        with eng.acting_as("claude"):  # an MCP token's caller
            eng.add_memory("remembered by the agent")
            with pytest.raises(Refused, match="curator.run needs the curator role; claude is agent"):
                eng.curator.run()
            with pytest.raises(Refused, match="curator"):
                eng.memories.pin(mid)
        eng.memories.pin(mid)  # the owner, outside the token's block
