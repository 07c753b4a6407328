"""`memconsole proposal show ID [--query Q] [--json]`: what approving will do (the plan) and which
searches' top k would change (impact on a dry run; nothing is written) — issues #25, #26."""

from __future__ import annotations

import json

import pytest

from console.cli import main
from engine import HashEmbedder, open_engine
from tests.engine.curator_helpers import dump

NIGHTLY = "The staging database is refreshed every night from production"


@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    db = str(tmp_path / "memory.db")

    def _run(*args):
        code = main(["--db", db, "--actor", "op", *args])
        out, err = capsys.readouterr()
        return code, out, err

    _run.db = db  # type: ignore[attr-defined]
    return _run


def test_proposal_show_lists_plan_and_impact_and_writes_nothing(run):
    assert run("add", NIGHTLY, "--importance", "0.9", "--no-dedup")[0] == 0
    assert run("add", NIGHTLY + " snapshot", "--no-dedup")[0] == 0
    assert run("add", "Lunch orders go to the shared spreadsheet every Friday", "--no-dedup")[0] == 0
    assert run("curate", "run", "--no-model")[0] == 0
    with open_engine(run.db, embedder=HashEmbedder()) as eng:
        [pid] = [p.id for p in eng.curator.list(status="pending") if p.kind == "merge"]
        before = dump(eng)
    code, out, err = run("proposal", "show", str(pid), "--query", "production snapshot", "--k", "2")
    assert code == 0, err
    assert "a NEW memory is made with the text, kind, category, agent and metadata of #1" in out
    assert "impact (dry run, rolled back):" in out
    assert "query 1 “production snapshot” (k=2): leaves #2" in out
    code, out, err = run("proposal", "show", str(pid), "--query", "lunch spreadsheet", "--k", "1", "--json")
    doc = json.loads(out)
    assert doc["proposal"]["status"] == "pending" and doc["plan"]["survivor_id"] == 1
    by = {r["label"]: r for r in doc["impact"]}
    assert set(by) == {"query 1", "member #1", "member #2"}
    assert by["query 1"]["changed"] is False and by["member #2"]["changed"] is True
    assert 2 in by["member #2"]["left"] and 0 in by["member #2"]["after"]  # 0: the merged memory
    with open_engine(run.db, embedder=HashEmbedder()) as eng:
        assert dump(eng) == before  # the preview wrote nothing
    # --no-impact: the plan only
    code, out, _ = run("proposal", "show", str(pid), "--no-impact", "--json")
    assert json.loads(out)["impact"] == [] and json.loads(out)["plan"]["kind"] == "merge"
