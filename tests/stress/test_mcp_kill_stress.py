"""kill -9 at the MCP door, the long version (`make stress`; the quick one is
tests/agents/test_mcp_kill.py): three `memconsole mcp --http` servers on one database (SQLite file,
PostgreSQL server) with four agents each, two more agents SIGKILLed mid-call, then a whole server
SIGKILLed mid-call. The other servers' agents see no error and keep writing, every acknowledged
write is present with its content, and `memconsole audit --verify` holds (on PostgreSQL the killed
server's open transactions roll back: an id gap, never a chain gap)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.stress.fleet_kill import audit_verify, missing_writes
from tests.stress.mcp_kill import acknowledged, run


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_servers_and_agents_killed_mid_call_lose_nothing_acknowledged(
    backend, tmp_path: Path, request
) -> None:
    from engine import HashEmbedder, open_engine

    db = str(tmp_path / "fleet.db") if backend == "sqlite" else str(request.getfixturevalue("pg_db"))
    open_engine(db, embedder=HashEmbedder(), actor="seeder", load="now").close()  # schema first
    out = run(db, tmp_path, per_server=4, servers=3, kill_agents=2, seconds=120, settle=2.0, after=5.0)

    assert all(out.caught_in_flight.values()), f"a kill caught no call in flight: {out.caught_in_flight}"
    errors = {n: out.acks[n].errors for n in out.survivors if out.acks[n].errors}
    assert not errors, f"errors reached the agents of the servers still up: {errors}"
    assert all(out.acks[n].done and out.after_kills[n] > 0 for n in out.survivors), out.after_kills
    acked = acknowledged(out)
    assert not missing_writes(db, acked)
    code, text = audit_verify(db)
    assert code == 0, text
    verdict = json.loads(text)
    assert verdict["ok"] is True, verdict
    print(
        f"\n{backend}: {len(out.acks)} agents on 3 servers, {len(out.killed_agents)} agents and 1 server"
        f" (with {len(out.orphans)} agents) killed mid-call; {len(acked)} acknowledged writes all"
        f" present; survivors' calls after the kills {sorted(out.after_kills.values())}; 0 errors;"
        f" wall {out.wall:.1f} s; audit --verify: {verdict.get('message', '')}"
    )
