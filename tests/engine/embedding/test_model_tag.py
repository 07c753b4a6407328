"""Stores made before model tags (issue #26) still open: read as all-MiniLM-L6-v2, stamped on the
first read-write open, searchable, and re-embeddable. Proved on the kept generation-2 file and on a
SQLite file and a PostgreSQL database written by the last version without tags (the code of
commit cd380c9, run in its own interpreter). And the registry's checksums refuse altered weights."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from engine import open_engine
from engine.embed import EmbedderHandle
from engine.embedding import checksums, registry
from engine.errors import EmbedderUnavailable

ROOT = Path(__file__).resolve().parents[3]
OLD = "cd380c9"  # the last commit whose stores carry no model tag
pytestmark = pytest.mark.backends


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMCONSOLE_TEST_MODELS", "1")
    monkeypatch.setenv("MEMCONSOLE_STATE", str(tmp_path / "state"))


@pytest.fixture
def old_db(tmp_path, backend, db_path, request):
    """A store written by the old version's own code (skips where its commit is not in the clone)."""
    src = tmp_path / "old"
    got = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", OLD], capture_output=True)
    if got.returncode != 0:
        pytest.skip(f"commit {OLD} is not in this clone")
    src.mkdir()
    (tmp_path / "old.tar").write_bytes(got.stdout)
    with tarfile.open(tmp_path / "old.tar") as tar:
        tar.extractall(src, filter="data")
    server = request.getfixturevalue("pg_server") if backend == "postgres" else None
    db = server.empty() if server else str(tmp_path / "old.db")
    script = (
        "from engine import open_engine\n"
        f"e = open_engine({db!r}, embedder='hash', load='now', actor='old')\n"
        "e.add_memories([{'content': f'old fact {i}: the boiler in flat {i} was serviced'} for i in range(30)],"
        " dedup=False)\n"
        "e.close()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(src), "MEMCONSOLE_STATE": str(tmp_path / "state")}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=src, timeout=120)
    yield db
    if server:
        server.drop(db)


def test_a_store_of_the_old_version_opens_searches_and_reembeds(old_db):
    with open_engine(old_db, embedder="hash", load="now", actor="tester") as e:
        st = e.embedding.status()
        assert (st.model, st.dim) == ("all-MiniLM-L6-v2", 384) and e.vectors.tag(fresh=True).stamped
        hits = e.search("boiler flat 7 serviced", k=3, mode="vector").hits
        assert hits and "flat 7" in hits[0].content
        assert e.embedding.run("test-hash-256", batch=8).state == "switched"
        assert e.search("boiler flat 7 serviced", k=3, mode="vector").hits[0].content == hits[0].content
    with open_engine(old_db, embedder="hash", load="now") as e:  # reopened: the new tag holds
        assert e.embedding.status().model == "test-hash-256" and e.embedder.get().dim == 256


@pytest.mark.sqlite_only("the kept generation-2 fixture is a SQLite file")
def test_the_generation_2_fixture_file_opens_tagged(tmp_path, backend):
    path = tmp_path / "gen2.db"
    with gzip.open(ROOT / "tests" / "fixtures" / "schema_gen2.db.gz") as f:
        path.write_bytes(f.read())
    with open_engine(path, embedder="hash", load="now", actor="tester") as e:
        assert e.vectors.tag(fresh=True).stamped and e.embedding.status().model == "all-MiniLM-L6-v2"
        n = e.embedding.status().total
        assert e.embedding.run("test-hash-256", batch=64).staged == 0
        assert e.embedding.status().total == n


def test_checksums_refuse_altered_weights_and_skip_rehashing_a_verified_file(tmp_path, backend):
    from engine.embed import default_model_path

    folder = tmp_path / "model"
    shutil.copytree(default_model_path(), folder)
    spec = registry.MINILM
    assert checksums.verify(spec, str(folder)) == ["model.safetensors", "tokenizer.json", "config.json"]
    assert checksums.verify(spec, str(folder)) == ["tokenizer.json", "config.json"]  # big file: recorded
    with open(folder / "model.safetensors", "r+b") as f:  # one byte changed in place
        f.seek(1000)
        b = f.read(1)
        f.seek(1000)
        f.write(bytes([b[0] ^ 1]))
    with pytest.raises(
        EmbedderUnavailable, match="model.safetensors .* does not match the published checksum"
    ):
        checksums.verify(spec, str(folder))
    # the engine's model loader with those weights: keyword-only, saying why
    handle = EmbedderHandle("numpy", str(folder))
    assert not handle.wait(60) and handle.state == "failed" and "published checksum" in (handle.error or "")
