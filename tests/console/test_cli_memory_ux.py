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


def _weak_on_demo(run, tmp_path, monkeypatch):
    assert run("demo", "--json")[0] == 0
    for q in ("*", "🚀"):
        code, out, _ = run("search", q, "-k", "25", "--no-access", "--json")
        doc = json.loads(out)
        assert code == 0 and doc["hits"] and all(h["weak"] for h in doc["hits"]), q
        assert "every hit is weak" in doc["message"]
    code, out, _ = run("search", "*", "-k", "25", "--no-access")
    assert "(weak) " in out and "every hit is weak" in out
    code, out, _ = run("search", "deploy on fridays", "-k", "5", "--no-access", "--json")
    assert not any(h["weak"] for h in json.loads(out)["hits"][:3])
    cfg = tmp_path / "config.toml"
    cfg.write_text("[search]\nweak_floor_cut = true\n")
    monkeypatch.setenv("MEMCONSOLE_CONFIG", str(cfg))
    for q in ("*", "🚀"):
        doc = json.loads(run("search", q, "-k", "25", "--no-access", "--json")[1])
        assert doc["hits"] == [] and "weak_floor_cut" in doc["message"], q
    doc = json.loads(run("search", "deploy on fridays", "-k", "5", "--no-access", "--json")[1])
    assert doc["hits"] and not any(h["weak"] for h in doc["hits"])


def test_weak_matches_on_the_demo(run, tmp_path, monkeypatch):
    _weak_on_demo(run, tmp_path, monkeypatch)


@pytest.mark.model
def test_weak_matches_on_the_demo_with_the_real_model(run, tmp_path, monkeypatch, minilm):
    monkeypatch.delenv("MEMCONSOLE_EMBEDDER")
    _weak_on_demo(run, tmp_path, monkeypatch)


def test_search_prints_how_final_is_computed(run):
    run("add", "the release train leaves on thursdays", "--importance", "0.8")
    doc = json.loads(run("search", "release train", "--no-access", "--json")[1])
    b = doc["hits"][0]["breakdown"]
    code, out, _ = run("search", "release train", "--no-access")
    assert code == 0
    assert "final = fused × (0.75 + 0.10·strength + 0.10·importance + 0.05·recency)" in out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("1 #1:"))
    assert f"{b['rrf']:.4f} × (0.75 + 0.10×{b['strength']:.3f} + 0.10×0.80 + 0.05×" in line
    assert line.endswith(f"= {b['final']:.4f}")


def test_memory_edit(run):
    run("add", "the release train leaves on thursdays")
    code, out, _ = run(
        "memory", "edit", "1", "the release train leaves on fridays", "--reason", "moved", "--json"
    )
    assert code == 0 and json.loads(out)["content"] == "the release train leaves on fridays"
    entries = json.loads(run("audit", "--target", "memory:1", "--json")[1])
    entries = entries["entries"] if isinstance(entries, dict) else entries
    assert entries[0]["action"] == "edit" and entries[0]["reason"] == "moved"
    assert run("memory", "edit", "1", "  ")[0] == 2
    assert run("memory", "edit", "99", "x")[0] == 2


def test_memory_archive_and_pin_take_several_ids(run):
    for w in ("one", "two", "three"):
        run("add", f"fact {w} about the release train", "--no-dedup")
    code, out, err = run("memory", "archive", "1", "2", "99", "--reason", "triage")
    assert code == 1 and "1 of 3 id(s) not found: 99" in err
    assert "memory 1: archive done" in out and "memory 99: no memory with id 99" in out
    assert "2 of 3 changed" in out
    code, out, _ = run("memory", "archive", "1", "3", "--json")
    assert code == 0
    assert [(o["id"], o["outcome"], o["ok"]) for o in json.loads(out)] == [
        (1, "unchanged", True),
        (3, "done", True),
    ]
    code, out, _ = run("memory", "pin", "2", "3", "--reason", "keep", "--json")
    assert code == 0 and [o["pinned"] for o in json.loads(out)] == [True, True]
    audit = json.loads(run("audit", "--action", "archive", "--json")[1])
    audit = audit["entries"] if isinstance(audit, dict) else audit
    assert sorted(int(e["target_id"]) for e in audit) == [1, 2, 3]  # one row per memory changed
    # one id keeps the single-memory form (the memory itself); none is a usage error
    assert json.loads(run("memory", "pin", "1", "--json")[1])["pinned"] is True
    code, _, err = run("memory", "pin")
    assert code == 2 and "Missing argument" in err
    code, _, err = run("memory", "archive", "1", "x")
    assert code == 2 and "Traceback" not in err
