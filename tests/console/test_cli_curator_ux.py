"""Triage at scale from the shell: `proposal approve|reject` with several ids or `--kind K --all`."""

from __future__ import annotations

import json

import pytest

from console.cli import main
from engine import HashEmbedder, open_engine


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


PAIRS = [
    ("Deploys to staging need the VPN turned on first", "atlas"),
    ("Deploys to staging need the VPN turned on first!", "atlas"),
    ("The coffee machine on floor three is broken again", "atlas"),
    ("The coffee machine on floor three is broken again!", "atlas"),
    ("Release notes are written in the shared notebook", "hermes"),
    ("Release notes are written in the shared notebook!", "hermes"),
]


def _three_merges(run) -> list[int]:
    for text, agent in PAIRS:
        assert run("add", text, "--agent", agent, "--no-dedup")[0] == 0
    assert run("curate", "run", "--no-model")[0] == 0
    code, out, _ = run("proposals", "--status", "pending", "--kind", "merge", "--json")
    ids = sorted(p["id"] for p in json.loads(out))
    assert len(ids) == 3
    return ids


def _status(run, pid: int) -> str:
    return json.loads(run("proposal", "show", str(pid), "--json")[1])["proposal"]["status"]


def test_approve_ids_stale_one_refused_others_apply(run):
    ids = _three_merges(run)
    first = json.loads(run("proposal", "show", str(ids[0]), "--json")[1])
    with open_engine(run.db, embedder=HashEmbedder(), actor="t") as eng:
        eng.memories.pin(first["members"][0]["id"], reason="keep this one")  # ids[0] now stale
    code, out, err = run("proposal", "approve", *map(str, ids), "--reason", "dupes", "--json")
    outcomes = {o["id"]: o for o in json.loads(out)}
    assert code == 1 and "1 of 3" in err
    assert not outcomes[ids[0]]["ok"] and "stale" in outcomes[ids[0]]["error"]
    assert outcomes[ids[0]]["status"] == "pending"
    assert all(outcomes[i]["ok"] and outcomes[i]["status"] == "applied" for i in ids[1:])
    assert [_status(run, i) for i in ids] == ["pending", "applied", "applied"]
    code, out, _ = run("audit", "--target", f"proposal:{ids[1]}", "--json")
    assert "proposal-applied" in [a["action"] for a in json.loads(out)]


def test_all_by_kind_and_agent_and_usage_errors(run):
    ids = _three_merges(run)
    assert run("proposal", "approve", "--all", "--reason", "x")[0] == 2  # --all without --kind
    assert run("proposal", "approve", "--kind", "merge", "--reason", "x")[0] == 2  # --kind without --all
    assert run("proposal", "approve", "--reason", "x")[0] == 2  # nothing named
    assert run("proposal", "reject", "--kind", "merge", "--all", "--reason", "  ")[0] == 2
    code, out, _ = run(
        "proposal", "reject", "--kind", "merge", "--agent", "hermes", "--all", "--reason", "later"
    )
    assert code == 0 and "1 of 1 rejected" in out
    assert [_status(run, i) for i in ids] == ["pending", "pending", "rejected"]
    code, out, _ = run("proposal", "approve", "--kind", "merge", "--all", "--reason", "dupes", "--json")
    assert code == 0 and [o["id"] for o in json.loads(out)] == sorted(ids[:2], reverse=True)
    assert [_status(run, i) for i in ids] == ["applied", "applied", "rejected"]
    code, out, _ = run("proposal", "reject", str(ids[0]), str(ids[2]), "--reason", "oops")
    assert code == 1 and "refused" in out  # an applied one cannot be rejected


def test_proposals_list_shows_text_and_agent_filter(run):
    _three_merges(run)
    code, out, _ = run("proposals", "--agent", "hermes")
    assert code == 0 and "Release notes are written" in out and "hermes" in out
    assert "coffee machine" not in out
    code, out, _ = run("proposals", "--agent", "atlas", "--json")
    assert len(json.loads(out)) == 2


WEEKLY = "Weekly review week {n}: walk through the open incidents, the on-call handover notes and the deploy calendar"


def test_risky_merges_shown_and_skipped_unless_included(run):
    for n in (40, 44, 46):
        run("add", WEEKLY.format(n=n), "--agent", "atlas", "--no-dedup")
    run("add", PAIRS[0][0], "--agent", "atlas", "--no-dedup")
    run("add", PAIRS[1][0], "--agent", "atlas", "--no-dedup")
    assert run("curate", "run", "--no-model")[0] == 0
    props = json.loads(run("proposals", "--kind", "merge", "--json")[1])
    risky = next(p["id"] for p in props if p["evidence"].get("risky"))
    safe = next(p["id"] for p in props if not p["evidence"].get("risky"))
    code, out, _ = run("proposal", "show", str(risky))
    assert "RISKY: the texts differ only in numbers or dates (40 / 44 / 46)" in out
    code, out, _ = run("proposal", "approve", "--kind", "merge", "--all", "--json")
    outcomes = {o["id"]: o for o in json.loads(out)}
    assert code == 0 and outcomes[safe]["ok"] and outcomes[risky]["skipped"]
    assert _status(run, risky) == "pending" and _status(run, safe) == "applied"
    code, out, _ = run("proposal", "approve", "--kind", "merge", "--all", "--include-risky")
    assert code == 0 and "1 of 1 approved" in out and _status(run, risky) == "applied"


def test_stale_is_shown_before_acting_and_rejected_in_one_action(run):
    """Issue #25: `proposals --stale` lists what approval would refuse, a bulk approve says how
    many were stale (and applies the rest), `proposal reject-stale` rejects every stale one with
    a reason (audited) and leaves the fresh ones pending."""
    ids = _three_merges(run)
    first = json.loads(run("proposal", "show", str(ids[0]), "--json")[1])
    second = json.loads(run("proposal", "show", str(ids[1]), "--json")[1])
    with open_engine(run.db, embedder=HashEmbedder(), actor="t") as eng:
        eng.memories.pin(first["members"][0]["id"], reason="keep this one")
        eng.memories.edit(second["members"][1]["id"], "Deploys to prod need the VPN and a ticket")
        assert sorted(eng.curator.stale()) == ids[:2]
    code, out, _ = run("proposals", "--stale", "--json")
    assert code == 0 and sorted(p["id"] for p in json.loads(out)) == ids[:2]
    code, out, err = run("proposal", "approve", "--kind", "merge", "--all", "--reason", "dupes")
    assert code == 1 and "1 of 3 approved and applied; 2 stale" in out
    assert [_status(run, i) for i in ids] == ["pending", "pending", "applied"]
    code, out, _ = run("proposal", "reject-stale", "--reason", "members changed", "--json")
    assert code == 0 and sorted(o["id"] for o in json.loads(out)) == ids[:2]
    assert [_status(run, i) for i in ids] == ["rejected", "rejected", "applied"]
    code, out, _ = run("audit", "--target", f"proposal:{ids[0]}", "--json")
    assert any(
        a["action"] == "proposal-rejected" and a["reason"] == "members changed" for a in json.loads(out)
    )
    assert run("proposal", "reject-stale", "--reason", "  ")[0] == 2
    code, out, _ = run("proposal", "reject-stale", "--reason", "again", "--json")
    assert code == 0 and json.loads(out) == []
