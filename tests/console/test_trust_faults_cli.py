"""Issue 22 (Trust), faults at the CLI: a full disk during ingest, forget, a curator run or a
migrate is one line saying "disk full" with exit 5 (never "SQL logic error", "internal error" or a
traceback), and no error line echoes megabytes of input: values are cut with their length named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from console.cli import main
from engine import HashEmbedder, open_engine
from engine.errors import DISK_FULL_EXIT
from tests.engine.storage.test_disk_full import full_disk

HUGE = "x" * 3_000_000


@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    monkeypatch.setenv("MEMCONSOLE_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "a.db"
    with open_engine(db, embedder=HashEmbedder()) as eng:
        eng.sessions.add("s1", agent="ops")
        eng.memories.add_many_ex(
            [
                {"content": f"the deploy of service {i % 9} runs on friday " * 4, "agent": "ops"}
                for i in range(150)
            ],
            dedup=False,
        )

    def _run(*args):
        code = main(["--db", str(db), *args])
        out, err = capsys.readouterr()
        return code, out, err

    _run.db = db
    return _run


def _one_line_disk_full(code: int, err: str) -> None:
    assert code == DISK_FULL_EXIT == 5, (code, err)
    assert err.count("\n") == 1 and "disk full" in err, err
    for bad in ("SQL logic", "internal error", "Traceback", "sqlite-vec"):
        assert bad not in err, err


def _jsonl(path: Path) -> Path:
    rows = [{"type": "message", "session_id": "s1", "content": f"line {i} " * 60} for i in range(300)]
    rows += [{"type": "memory", "content": f"imported fact {i} " * 60} for i in range(300)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.mark.parametrize("verb", ["ingest", "forget", "curate run", "migrate"])
def test_a_full_disk_is_one_line_exit_5(run, monkeypatch, tmp_path, verb):
    args = {
        "ingest": ["ingest", str(_jsonl(tmp_path / "in.jsonl"))],
        "forget": ["forget", "--agent", "ops", "--reason", "user asked"],
        "curate run": ["curate", "run"],
        "migrate": ["migrate", "--from", str(run.db), "--to", str(tmp_path / "copy.db")],
    }[verb]
    with full_disk(monkeypatch, spare=0 if verb != "migrate" else 20):
        code, _, err = run(*args)
    _one_line_disk_full(code, err)


def test_error_lines_cut_echoed_values_and_name_their_length(run, tmp_path):
    huge_role = tmp_path / "role.jsonl"
    huge_role.write_text(
        json.dumps({"type": "message", "session_id": "s1", "role": HUGE, "content": "x"}) + "\n"
    )
    for args in (
        ["search", "deploy", "--tier", HUGE],
        ["memory", "importance", "1", HUGE],
        ["ingest", str(huge_role)],
        ["search", "deploy", "-k", HUGE],
        ["forget", "--session", HUGE, "--reason", "r"],
    ):
        code, out, err = run(*args)
        assert code in (1, 2) and "Traceback" not in err, (args[:2], code, err[:300])
        assert len(err) < 2_000 and err.count("\n") == 1, (args[:2], len(err))
        assert "3,000,000 chars" in err or "3,000,0" in err, (args[:2], err[:400])
