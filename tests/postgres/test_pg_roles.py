"""Roles on PostgreSQL (#27): `operators grant` maps them to database roles and GRANTs, so a
viewer's login is refused by the engine (Refused, audited) and by the server itself when it
tries to write around the engine."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from console.cli import main
from engine import open_engine
from engine.embed import HashEmbedder
from engine.errors import Refused
from engine.identity import parse_actor


def _as(url: str, user: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}@{host}"))


@pytest.fixture
def login(pg_server):
    name = f"mc_op_{uuid.uuid4().hex[:8]}"
    pg_server.admin.execute(f"CREATE ROLE {name} LOGIN")
    yield name
    for db in list(pg_server._names.values()):  # its grants live in each test database
        try:
            with psycopg.connect(pg_server.uri(db), autocommit=True) as c:
                c.execute(f"DROP OWNED BY {name}")
        except psycopg.Error:
            pass
    pg_server.admin.execute(f"DROP ROLE IF EXISTS {name}")


def test_viewer_login_cannot_write_through_or_around_the_engine(pg_db, login, monkeypatch, capsys):
    with open_engine(pg_db, embedder=HashEmbedder()) as admin:
        mid = admin.add_memory("deploys need a change ticket")
        assert admin.operators.whoami().role == "admin"  # the superuser
        admin.operators.grant(login, "viewer")
        assert [e.roles for e in admin.operators.list() if e.name == login] == [("viewer",)]
    viewer_url = _as(pg_db, login)
    with open_engine(viewer_url, embedder=HashEmbedder(), label="mallory") as eng:
        me = eng.operators.whoami()
        assert (me.verified, me.source, me.role) == (login, "pg", "viewer")
        assert eng.search("change ticket").hits  # reads work
        with pytest.raises(Refused, match="memories.pin needs the curator role"):
            eng.memories.pin(mid)
        refused = eng.audit.log(action="refused")[0]
        assert parse_actor(refused.actor).verified == login and parse_actor(refused.actor).label == "mallory"
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    assert main(["--db", viewer_url, "memory", "pin", str(mid)]) == 2
    assert "needs the curator role" in capsys.readouterr().err
    with psycopg.connect(viewer_url, autocommit=True) as raw:  # around the engine: the server says no
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            raw.execute("UPDATE memories SET pinned = 1 WHERE id = %s", [mid])
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            raw.execute("DELETE FROM memories")
    with open_engine(pg_db, embedder=HashEmbedder()) as admin:
        admin.operators.grant(login, "curator")
    with open_engine(viewer_url, embedder=HashEmbedder()) as eng:
        assert eng.operators.whoami().role == "curator"
        eng.memories.pin(mid)
        assert eng.memories.get(mid).pinned
        row = eng.audit.log(target=f"memory:{mid}")[0]
        assert parse_actor(row.actor).verified == login
        with pytest.raises(Refused, match="admin"):
            eng.operators.grant(login, "admin")
