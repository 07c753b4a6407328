"""Through a real PgBouncer in `pool_mode = transaction` (issue #24): a viewer and an admin
interleaved on one bouncer (neither gets the other's rights), the MCP HTTP server and a live console
on a bouncer URL. The store's own behaviour behind a pooler: test_pg_bouncer.py."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from engine import FixedClock, HashEmbedder, open_engine
from engine.errors import Refused
from engine.identity import parse_actor
from tests.pg_server import login_role
from tests.postgres.bouncer_agents import T0, opened, together
from tests.postgres.console_follow import refresh_after


@pytest.fixture
def viewer_login(pg_server):
    yield from login_role(pg_server, "mc_bv")


def test_a_viewer_and_an_admin_interleaved_on_one_bouncer_never_share_rights(
    pg_bouncer, pg_db, viewer_login, monkeypatch, capsys
):
    """Identity is the connection's `current_user` and roles are GRANTs (no SET ROLE, no session
    setting): PgBouncer keeps one pool per (database, user), so a viewer's transactions never run on
    the admin's server connections nor the other way round, however they interleave."""
    from console.cli import main

    admin = open_engine(pg_bouncer.url(pg_db), embedder=HashEmbedder(), clock=FixedClock(T0), load="now")
    mid = admin.add_memory("deploys need a change ticket")
    admin.operators.grant(viewer_login, "viewer")
    viewer = open_engine(
        pg_bouncer.url(pg_db, viewer_login), embedder=HashEmbedder(), clock=FixedClock(T0), load="now"
    )
    seen: dict[str, set[str]] = {"viewer": set(), "admin": set()}
    errors: list[str] = []
    try:
        assert viewer.store.pooled
        gate = threading.Barrier(2, timeout=30)

        def as_viewer() -> None:
            for _ in range(6):
                gate.wait()
                me = viewer.operators.whoami()
                seen["viewer"].add(f"{me.verified}:{me.role}")
                try:
                    viewer.memories.pin(mid)
                    errors.append("the viewer pinned a memory")
                except Refused as exc:
                    assert "needs the curator role" in str(exc)
                with psycopg.connect(pg_bouncer.url(pg_db, viewer_login), autocommit=True) as raw:
                    seen["viewer"].add(raw.execute("SELECT current_user").fetchone()[0])
                    try:
                        raw.execute("UPDATE memories SET pinned = 1 WHERE id = %s", [mid])
                        errors.append("the viewer's UPDATE went through")
                    except psycopg.errors.InsufficientPrivilege:
                        pass

        def as_admin() -> None:
            for r in range(6):
                gate.wait()
                me = admin.operators.whoami()
                seen["admin"].add(f"{me.verified}:{me.role}")
                (admin.memories.pin if r % 2 == 0 else admin.memories.unpin)(mid)

        together(as_viewer, as_admin, gate=gate)
        assert errors == []
        assert seen["viewer"] == {f"{viewer_login}:viewer", viewer_login}
        assert seen["admin"] == {"postgres:admin"}
        refused = [
            r for r in admin.audit.log(action="refused") if parse_actor(r.actor).verified == viewer_login
        ]
        assert len(refused) == 6  # each refusal audited under the viewer's own role
    finally:
        viewer.close()
        admin.close()
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    capsys.readouterr()
    assert main(["--db", pg_bouncer.url(pg_db, viewer_login), "memory", "pin", str(mid)]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs the curator role" in err and len(err.splitlines()) == 1, err


async def test_the_mcp_http_server_on_a_bouncer_url(pg_bouncer, pg_db, tmp_path):
    import asyncio

    from tests.agents.conftest import RW_TOKEN, TOKENS, free_port, http_server, write_tokens
    from tests.agents.test_mcp_http import client

    url = pg_bouncer.url(pg_db)
    port = free_port()
    tokens = write_tokens(tmp_path / "tokens", TOKENS + "other-token-0123456789abcd other\n")
    with http_server(url, tokens, port):  # type: ignore[arg-type]
        mcp = f"http://127.0.0.1:{port}/mcp"
        async with client(mcp, RW_TOKEN) as rw, client(mcp, "other-token-0123456789abcd") as other:
            writes = [
                c.call_tool("remember", {"content": f"{who} says the blue pipeline deploys item {i}"})
                for i in range(4)
                for who, c in (("laptop", rw), ("other", other))
            ]
            results = await asyncio.gather(*writes)
            assert not any(r.is_error for r in results), [r.content for r in results]
            recalls = await asyncio.gather(
                *(c.call_tool("recall", {"query": "blue pipeline"}) for c in (rw, other))
            )
            assert not any(r.is_error for r in recalls), [r.content for r in recalls]
            assert all("blue pipeline" in str(r.content) for r in recalls)
    with psycopg.connect(pg_db, autocommit=True) as c:
        actors = dict(
            c.execute("SELECT actor, count(*) FROM audit WHERE action = 'add' GROUP BY 1").fetchall()
        )
    assert actors == {"laptop": 4, "other": 4}


async def test_an_open_console_on_a_bouncer_url_follows_another_process_commit(pg_bouncer, pg_db):
    url = pg_bouncer.url(pg_db)
    e = opened(url)
    e.add_memory("the first memory", dedup=False)

    def write() -> float:
        other = opened(url, "elsewhere")
        other.add_memory("a memory from another machine", dedup=False)
        other.close()
        return time.monotonic()

    try:
        waited = await refresh_after(e, "pg via pgbouncer", write)
        print(f"console via the bouncer refreshed {1000 * waited:.0f} ms after the commit")
        assert waited < 1.5
    finally:
        e.close()
