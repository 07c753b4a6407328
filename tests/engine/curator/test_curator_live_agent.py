"""Issue #25 acceptance: an agent process keeps recalling (search with access recorded, in a loop,
its own engine on the same SQLite file or PostgreSQL database) while an operator approves a merge
of the very memories it keeps recalling: the approval succeeds at once and the merged memory
carries the members' access counts."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.direct_sql import direct
from tests.engine.curator_helpers import TWIN_A, TWIN_B

pytestmark = pytest.mark.backends
ROOT = Path(__file__).resolve().parents[3]

AGENT = textwrap.dedent(
    """
    import os, sys, time
    from engine import HashEmbedder, open_engine
    eng = open_engine(sys.argv[1], embedder=HashEmbedder(), actor="agent-7")
    n = 0
    deadline = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < deadline and not os.path.exists(sys.argv[3]):
        hits = eng.search("staging deploy key vault", k=5, record_access=True).hits
        n += 1
        if n == 1:
            print("recalling", flush=True)
    print(n, flush=True)
    eng.close()
    """
)


def _access(eng, ids) -> dict[int, int]:
    c = direct(eng.store)
    return {i: int(c.one("SELECT access_count FROM memories WHERE id = ?", (i,))[0]) for i in ids}


def test_merge_approved_while_an_agent_keeps_recalling_its_members(eng, db_path, tmp_path):
    a = eng.add_memory(TWIN_A, agent="atlas", importance=0.9, dedup=False)
    b = eng.add_memory(TWIN_B, agent="atlas", dedup=False)
    [pid] = [p.id for p in eng.curator.run().proposals if p.kind == "merge"]
    stop = tmp_path / "stop"  # the agent recalls until told (at most 30 s), not for a fixed time
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, str(db_path), "30", str(stop)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert agent.stdout is not None
        assert agent.stdout.readline().strip() == "recalling"
        deadline = time.monotonic() + 20
        while min(_access(eng, [a, b]).values()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        seen = _access(eng, [a, b])
        assert min(seen.values()) >= 3  # the agent is recalling both members
        assert eng.curator.stale([pid]) == {}  # use does not spoil a merge
        p = eng.curator.approve(pid, reason="approved while agent-7 recalls")  # the first try holds
        assert p.status == "applied"
        at_apply = _access(eng, [a, b])
        merged = _access(eng, [p.result_id])[p.result_id]
        deadline = time.monotonic() + 20  # until a recall after the approval lands on the merged memory
        while _access(eng, [p.result_id])[p.result_id] <= merged and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.touch()
        out, err = agent.communicate(timeout=60)
        assert agent.returncode == 0, err[-2000:]
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    assert int(out.split()[-1]) > 3  # it went on recalling after the approval
    # the merged memory started with the members' counts (a recall in flight may still land on a
    # member after the apply, or on the merged memory before this read: so at least)
    assert merged >= sum(seen.values()) and at_apply[a] >= seen[a]
    assert _access(eng, [p.result_id])[p.result_id] > merged  # and keeps being recalled
    assert eng.memories.get(a).absorbed_into == p.result_id == eng.memories.get(b).absorbed_into
