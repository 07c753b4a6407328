"""The curator, forget and audit verbs, called in-process as `memconsole` would be."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from console.cli import main

CANARY = "Canary-Lemur-51c8e2-Tundra"
TEXT = f"Remember: the vault passphrase is {CANARY} for the east wing"


@pytest.fixture
def run(tmp_path, capsys):
    db = str(tmp_path / "memory.db")

    def _run(*args):
        code = main(["--db", db, "--actor", "op", *args])
        out, err = capsys.readouterr()
        return code, out, err

    return _run


def _files(tmp_path: Path) -> list[Path]:
    return [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and (p.name.startswith("memory.db") or "curator" in p.parts)
    ]


def _leaks(tmp_path: Path, text: str) -> list[str]:
    b = text.encode()
    wins = {b[i : i + 12] for i in range(len(b) - 11)} | {b}
    return [
        p.name
        for p in _files(tmp_path)
        if any(w in p.read_bytes() or w.lower() in p.read_bytes().lower() for w in wins)
    ]


def test_acceptance_canary_merged_reported_then_forgotten(run, tmp_path, minilm):
    """Real model: embed, search, merge through an approved proposal, forget by query, prove it."""
    code, out, _ = run("add", TEXT, "--no-dedup", "--json")
    a = json.loads(out)["id"]
    code, out, _ = run("add", TEXT + ".", "--no-dedup", "--json")
    b = json.loads(out)["id"]
    code, out, _ = run("search", CANARY, "--json")
    assert code == 0 and {h["id"] for h in json.loads(out)["hits"]} >= {a, b}
    code, out, err = run("curate", "run", "--json")
    assert code == 0, err
    merge = [p for p in json.loads(out)["proposals"] if p["kind"] == "merge"]
    assert len(merge) == 1 and merge[0]["members"] == [a, b]
    code, out, _ = run("proposal", "approve", str(merge[0]["id"]), "--json")
    merged = json.loads(out)["result_id"]
    code, out, _ = run("memory", "show", str(merged), "--json")
    assert CANARY in json.loads(out)["content"]
    assert "REPORT.md" in _leaks(tmp_path, CANARY) and "run.json" in _leaks(tmp_path, CANARY)

    code, out, err = run("forget", "--query", CANARY, "--reason", "test", "--json")
    assert code == 0, err
    doc = json.loads(out)
    # the case, plus (issue #25) its levels, why it is not verified, and who did what
    assert {"request_id", "status", "counts", "residue", "levels", "verified", "why_not_verified"} <= set(doc)
    assert doc["status"] == "verified" and doc["residue"] == 0 and doc["counts"]["memories"] == 3
    assert _leaks(tmp_path, CANARY) == []
    code, out, _ = run("search", CANARY, "--json")
    assert not any(CANARY in h["content"] for h in json.loads(out)["hits"])
    code, out, _ = run("search", CANARY, "--mode", "keyword", "--json")
    assert json.loads(out)["hits"] == []
    code, out, err = run("explain", CANARY, str(merged), "--json")
    assert code == 2 and CANARY not in out + err  # the forgotten memory's id names nothing now
    code, out, _ = run("audit", "--json")
    assert code == 0 and CANARY not in out and "Lemur" not in out
    assert "forget" in [e["action"] for e in json.loads(out)]
    code, out, _ = run("forget-request", str(doc["request_id"]), "--json")
    req = json.loads(out)
    assert req["status"] == "verified" and req["residue"] == 0 and CANARY not in out


@pytest.fixture
def hashed(monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")


def test_queue_verbs_and_json_shapes(run, hashed, tmp_path):
    run("add", "Deploys to staging need the VPN turned on first", "--no-dedup")
    run("add", "Deploys to staging need the VPN turned on first!", "--no-dedup")
    code, out, _ = run("curate", "run", "--dry-run", "--no-model", "--json")
    dry = json.loads(out)
    assert code == 0 and dry["id"] is None and dry["dry_run"] and len(dry["proposals"]) == 1
    assert json.loads(run("proposals", "--json")[1]) == []
    code, out, _ = run("curate", "run", "--no-model")
    assert code == 0 and "proposed 1 merge" in out and "REPORT.md" in out
    code, out, _ = run("proposals", "--status", "pending", "--kind", "merge", "--json")
    pid = json.loads(out)[0]["id"]
    code, out, _ = run("proposal", "show", str(pid), "--json")
    d = json.loads(out)
    assert [m["id"] for m in d["members"]] == [1, 2] and len(d["similarities"]) == 2
    code, out, _ = run("proposal", "approve", str(pid), "--text", "Staging deploys need the VPN on", "--json")
    p = json.loads(out)
    assert p["status"] == "applied"
    assert (
        json.loads(run("memory", "show", str(p["result_id"]), "--json")[1])["content"]
        == "Staging deploys need the VPN on"
    )
    code, out, _ = run("proposal", "undo", str(pid), "--json")
    assert json.loads(out)["status"] == "undone"
    assert json.loads(run("memory", "show", "1", "--json")[1])["tier"] == "active"
    code, out, err = run("proposal", "reject", str(pid), "--reason", "x")
    assert code != 0 and err.count("\n") == 1 and "Traceback" not in err
    code, out, _ = run("audit", "--target", f"proposal:{pid}", "--json")
    assert [e["action"] for e in json.loads(out)] == [
        "proposal-undone",
        "proposal-applied",
        "proposal-approved",
        "proposal-created",
    ]
    code, out, _ = run("audit", "--verify")
    assert code == 0 and "intact" in out


def test_forget_verbs(run, hashed):
    run("add", "The wifi password is hunter2-orchid-77", "--no-dedup")
    code, out, _ = run("forget", "--query", "hunter2-orchid", "--preview", "--reason", "leak", "--json")
    pv = json.loads(out)
    assert pv["status"] == "previewed" and pv["items"][0]["kind"] == "memory"
    code, out, _ = run("forget-requests", "--json")
    assert [r["status"] for r in json.loads(out)] == ["previewed"]
    code, out, _ = run("forget-request", str(pv["request_id"]), "--execute", "--json")
    assert json.loads(out)["status"] == "verified"
    code, out, _ = run("forget", "--memory", "1", "--reason", "again")
    assert code != 0
    for args in (
        ["forget", "--reason", "x"],
        ["forget", "--agent", "a", "--user", "u", "--reason", "x"],
        ["forget", "--query", "nothing here"],
        ["proposal", "show", "42"],
        ["forget-request", "9"],
        ["audit", "--since", "not a date"],
    ):
        code, out, err = run(*args)
        assert code != 0 and "Traceback" not in err and err.strip().count("\n") == 0, args
