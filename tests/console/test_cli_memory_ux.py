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


def test_explain_takes_search_mode_and_filters(run):
    run("add", "the release train leaves on thursdays", "--agent", "atlas")
    run("add", "the coffee machine is on floor two", "--agent", "scout")
    code, out, _ = run("explain", "release train", "1", "--json")
    assert code == 0 and json.loads(out)["mode"] == "hybrid"  # as `search` runs by default
    code, out, _ = run("explain", "release train", "1", "--mode", "keyword", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["mode"] == "keyword" and doc["in_top_k"] is True
    code, out, _ = run("explain", "release train", "1", "--agent", "scout", "--json")
    doc = json.loads(out)
    assert doc["in_top_k"] is False and any("agent" in e for e in doc["excluded_by"])
    code, out, err = run("explain", "release train", "99")
    assert code == 2 and "no memory with id 99" in err and out == ""
    code, _, err = run("explain", "release train", "1", "--mode", "semantic")
    assert code == 2
