"""CLI memory lifecycle and search UX (issue 16): restore, explain with search's mode and filters,
weak matches, the final-score formula."""

import json

import pytest

from console.cli import main


@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    db = str(tmp_path / "a.db")

    def _run(*args):
        code = main(["--db", db, *args])
        out, err = capsys.readouterr()
        return code, out, err

    return _run


def test_memory_restore(run):
    run("add", "the release train leaves on thursdays")
    code, out, err = run("memory", "restore", "1", "--reason", "still true", "--json")
    assert code == 2 and "not archived" in err
    assert json.loads(run("memory", "archive", "1", "--json")[1])["tier"] == "archived"
    code, out, _ = run("memory", "restore", "1", "--reason", "still true", "--json")
    assert code == 0 and json.loads(out)["tier"] == "active"
    code, out, _ = run("audit", "--target", "memory:1", "--json")
    entries = json.loads(out)
    entries = entries["entries"] if isinstance(entries, dict) else entries
    assert any(e["action"] == "restore" and e["reason"] == "still true" for e in entries)
    code, out, err = run("memory", "restore", "99", "--reason", "x")
    assert code == 2 and "no memory with id 99" in err
