"""`memconsole reembed` (issue #26) as an operator runs it: killed with -9 mid-run, then resumed
by running it again (no --model: the one in progress); --status and --json."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from engine import open_engine


def _cli(db, *args, env):
    return subprocess.run(
        [sys.executable, "-m", "console.cli", "--db", str(db), *args],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def _staged(db) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
        return int(c.execute("SELECT count(*) FROM vector_staging").fetchone()[0])


@pytest.fixture
def env(tmp_path):
    return {**os.environ, "MEMCONSOLE_TEST_MODELS": "1", "MEMCONSOLE_STATE": str(tmp_path / "state")}


def test_reembed_killed_then_resumed(tmp_path, env, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_STATE", env["MEMCONSOLE_STATE"])
    monkeypatch.setenv("MEMCONSOLE_TEST_MODELS", "1")
    db = tmp_path / "m.db"
    with open_engine(db, embedder="hash", load="now") as e:
        e.add_memories(
            [{"content": f"row {i}: the {i % 17} blue pumps in hall {i}"} for i in range(300)], dedup=False
        )
    proc = subprocess.Popen(
        [sys.executable, "-m", "console.cli", "--db", str(db), "reembed", "--model", "test-hash-256", "--batch", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _staged(db) < 20 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    staged = _staged(db)
    assert 20 <= staged < 300, "the run was not cut mid-way"
    st = json.loads(_cli(db, "reembed", "--status", "--json", env=env).stdout)
    assert st["model"] == "all-MiniLM-L6-v2" and st["target"] == "test-hash-256" and st["staged"] == staged
    done = _cli(db, "reembed", "--json", env=env)  # no --model: resumes the one in progress
    assert done.returncode == 0, done.stderr
    st = json.loads(done.stdout)
    assert st["state"] == "switched" and st["model"] == "test-hash-256" and st["dim"] == 256
    with open_engine(db, embedder="hash", load="now") as e:
        assert [m["id"] for m in e.embedding.models() if m["active"]] == ["test-hash-256"]
        assert [r.action for r in e.audit.log(action="reembed*")] == ["reembed-switch", "reembed-start"]
        assert e.search("blue pumps hall 7", k=3, mode="vector").hits
