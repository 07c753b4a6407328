"""A cold `memconsole recall replay ID` (issue #26 (d)): the CLI's own process imports the recall
verbs' module and what a replay runs, not every other verb's module and its engine parts (the
curator's impact, forget's levels) nor the 39-module stemmer package SQLite never uses (FTS5 stems
itself). Run in a fresh interpreter, as the CLI runs; the replay's answer is the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from engine import FixedClock, HashEmbedder, open_engine

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import io, json, sys
from console.cli import main
out, sys.stdout = sys.stdout, io.StringIO()
code = main(["--db", sys.argv[1], "recall", "replay", sys.argv[2], "--json"])
answer, sys.stdout = sys.stdout.getvalue(), out
heavy = ["console.cli.curator", "console.cli.forget", "engine.curator.impact", "engine.forget.levels",
         "snowballstemmer"]
print(json.dumps({"code": code, "answer": json.loads(answer), "loaded": [m for m in heavy if m in sys.modules],
                  "modules": len(sys.modules)}))
"""


def test_a_cold_replay_imports_only_what_it_runs(tmp_path):
    db = tmp_path / "r.db"
    with open_engine(db, embedder=HashEmbedder(), clock=FixedClock("2026-01-01T00:00:00Z"), actor="t") as eng:
        eng.add_memories([{"content": f"the kettle in room {i} needs descaling"} for i in range(20)])
        eng.search("kettle room 3", k=5, mode="keyword", door="mcp", for_agent="coder")
        rid = eng.recalls.list(limit=1)[0].id
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMCONSOLE_EMBEDDER": "hash"}
    got = subprocess.run(
        [sys.executable, "-c", PROBE, str(db), str(rid)], capture_output=True, text=True, env=env, timeout=120
    )
    assert got.returncode == 0, got.stderr
    res = json.loads(got.stdout.strip().splitlines()[-1])
    a = res["answer"]
    assert res["code"] == 0 and a["recall_id"] == rid and a["left"] == a["entered"] == [] and a["now"]
    assert res["loaded"] == []  # none of the other verbs' imports, nor the stemmer
