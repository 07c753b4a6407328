"""Hostile input at the CLI (split from test_hostile): any text to any verb prints a result or one
line on stderr with exit code 2, never a traceback; undecodable argv, a foreign file and bad
database paths likewise."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import HashEmbedder, open_engine
from tests.engine.hostile_text import HOSTILE, hostile_text


# -- the CLI -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cli_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "c.db"
    with open_engine(path, embedder=HashEmbedder()) as e:
        e.sessions.add("s1")
        e.sessions.add_message("s1", "user", "the deploy runs on fridays")
        e.add_memory("the deploy runs on fridays")
    return str(path)


@pytest.fixture
def hash_model(monkeypatch):
    """CLI verbs load 'the model'; here it is HashEmbedder, so no test waits for MiniLM."""
    import engine.embed

    monkeypatch.setattr(engine.embed, "MiniLMEmbedder", lambda *a, **k: HashEmbedder())


@HOSTILE
@given(q=hostile_text, verb=st.sampled_from(["search", "messages", "add", "explain"]))
def test_cli_prints_one_line_or_a_result(cli_db, hash_model, capsys, q, verb):
    from console.cli import main

    capsys.readouterr()
    args = {
        "search": ["search", q, "--json"],
        "messages": ["messages", q, "--json"],
        "add": ["add", q, "--json", "--no-dedup"],
        "explain": ["explain", q, "1", "--json"],
    }[verb]
    code = main(["--db", cli_db, *args])
    out, err = capsys.readouterr()
    if code == 0:
        json.loads(out)
        assert err == ""
    else:
        assert code == 2, (code, err)
        assert err.count("\n") == 1 and err.startswith("memconsole: "), err
        assert "Traceback" not in err


def _run(*args: str | bytes, db: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "console.cli", "--db", db, *args], capture_output=True, timeout=120
    )


def test_cli_undecodable_argv_and_a_foreign_file(cli_db, tmp_path):
    # Bytes that are not UTF-8 arrive as lone surrogates (surrogateescape): refused in one line.
    p = _run("add", b"\xff\xfe broken", db=cli_db)
    err = p.stderr.decode()
    assert p.returncode == 2 and err.count("\n") == 1 and "surrogate" in err, err
    junk = tmp_path / "notes.txt"
    junk.write_text("this is not a database\n" * 100)
    p = _run("sessions", db=str(junk))
    err = p.stderr.decode()
    assert p.returncode == 2 and err.count("\n") == 1 and "not a usable SQLite database" in err, err
    assert junk.read_text() == "this is not a database\n" * 100


@pytest.mark.parametrize("where", ["dir", "under-a-file", "unwritable"])
def test_cli_bad_database_paths_are_one_line(tmp_path, capsys, where):
    from console.cli import main

    (tmp_path / "afile").write_text("x")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    db = {"dir": tmp_path, "under-a-file": tmp_path / "afile" / "m.db", "unwritable": locked / "m.db"}[where]
    if where == "unwritable" and os.access(locked, os.W_OK):
        pytest.skip("running as a user who can write anywhere (root)")
    code = main(["--db", str(db), "sessions"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("memconsole: "), err
