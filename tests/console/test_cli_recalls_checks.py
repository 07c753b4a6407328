"""`memconsole check add|list|run|remove` and `recall replay|why` (issue #26): `check run` exits 1
once a curator approval took the pinned memory out of the top k (CI for a memory store); bad input
is one line, exit 2."""

from __future__ import annotations

import json

from console.cli import main
from engine import HashEmbedder, open_engine

A = "The boathouse code opens the west shed every morning"
B = "The boathouse code opens the west shed every morning!"


def test_check_run_fails_after_an_approval_and_replay_says_why(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    db = str(tmp_path / "m.db")
    with open_engine(db, embedder=HashEmbedder(), actor="seed") as eng:
        a = eng.add_memory(A, agent="atlas", dedup=False)
        eng.add_memory(B, agent="atlas", dedup=False)
        eng.search("boathouse code", k=2, door="mcp", for_agent="atlas")
        pid = eng.curator.run().proposals[0].id
    assert main(["--db", db, "check", "add", "--from-recall", "1", "--memory", str(a), "--json"]) == 0
    added = json.loads(capsys.readouterr().out)
    assert added["last_ok"] is True and added["k"] == 2 and added["recall_id"] == 1
    assert main(["--db", db, "check", "run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    with open_engine(db, embedder=HashEmbedder(), actor="op") as eng:
        res = eng.curator.approve(pid)
    assert main(["--db", db, "check", "run", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["failed"] == [added["id"]] and doc["checks"][0]["last_why"]
    assert main(["--db", db, "recall", "replay", "1"]) == 0
    out = capsys.readouterr().out
    assert f"merged into #{res.result_id} (proposal #{pid})" in out and "1 entered" in out
    assert main(["--db", db, "recall", "why", "1", str(a), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["in_top_k"] is False
    assert main(["--db", db, "check", "list", "--json"]) == 0
    assert [c["last_ok"] for c in json.loads(capsys.readouterr().out)] == [False]
    # one clear line for bad input
    assert main(["--db", db, "check", "add", "--memory", str(a)]) == 2
    assert "--query or --from-recall" in capsys.readouterr().err
    assert main(["--db", db, "check", "add", "-q", "x", "--memory", "9999"]) == 2
    assert "no memory with id 9999" in capsys.readouterr().err
    assert main(["--db", db, "check", "remove", str(added["id"])]) == 0
    assert main(["--db", db, "check", "remove", str(added["id"])]) == 2
