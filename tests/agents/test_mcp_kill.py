"""kill -9 at the MCP door (issue #24), the quick proof (the long one, both backends and more
agents: tests/stress/test_mcp_kill_stress.py): two `memconsole mcp --http` servers on one SQLite
file, agents on each through the real MCP client SDK; an agent process is SIGKILLed while its
call is in flight, then a whole server while its agents' calls are in flight. The other server's
agents see no error and keep writing; every write any agent saw acknowledged is present with its
content; `memconsole audit --verify` holds."""

from __future__ import annotations

import json
from pathlib import Path

from tests.stress.fleet_kill import audit_verify, missing_writes
from tests.stress.mcp_kill import acknowledged, run


def test_agent_and_server_killed_mid_call_lose_nothing_acknowledged(tmp_path: Path) -> None:
    from engine import HashEmbedder, open_engine

    db = str(tmp_path / "fleet.db")
    open_engine(db, embedder=HashEmbedder(), actor="seeder", load="now").close()  # schema first
    out = run(db, tmp_path, per_server=2, servers=2, kill_agents=1, seconds=30, settle=1.0, after=1.5)

    assert all(out.caught_in_flight.values()), f"a kill caught no call in flight: {out.caught_in_flight}"
    assert all(a.ready for a in out.acks.values())
    for n in out.survivors:  # the agents of the server still up
        a = out.acks[n]
        assert not a.errors, f"{n}: errors reached it: {a.errors}"
        assert a.done, f"{n} did not finish: {a.last}"
        assert out.after_kills[n] > 0, f"{n} made no call after the kills"
    for n in out.orphans:  # the killed server's agents: their in-flight call failed, nothing more
        assert out.acks[n].writes, f"{n} had nothing acknowledged before its server died"
        assert not out.acks[n].done
    assert not out.acks[out.killed_agents[0]].done

    acked = acknowledged(out)
    assert len(acked) >= 6
    assert not missing_writes(db, acked)
    code, text = audit_verify(db)
    assert code == 0, text
    assert json.loads(text)["ok"] is True, text
