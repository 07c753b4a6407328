"""`memconsole forget` / `forget-request` as an operator runs them (issues #25, #27): match modes,
the preview's marked words and counts per kind, narrowing, withdrawal, levels and why-not in
JSON, deadlines in the list, and the two-person rule between two actors. Both backends."""

from __future__ import annotations

import json

import pytest

from console.cli import main
from engine.identity import parse_actor

pytestmark = pytest.mark.backends


@pytest.fixture
def run(db_path, capsys):
    def _run(*args, actor="op"):
        code = main(["--db", str(db_path), "--actor", actor, *args])
        out, err = capsys.readouterr()
        return code, out, err

    return _run


def _seed(run) -> dict:
    ids = {}
    for key, text in (
        ("holds", "Sam holds ES futures; typical size is 2 to 3 contracts"),
        ("possessive", "Sam's largest drawdowns happen on CPI release mornings"),
    ):
        code, out, _ = run("add", text, "--no-dedup", "--json")
        ids[key] = json.loads(out)["id"]
    code, out, err = run("rule", "add", "Flag sample sizes under 30", "--json")
    assert code == 0, err
    ids["rule"] = json.loads(out)["id"]
    return ids


def test_query_words_preview_narrow_withdraw(run):
    ids = _seed(run)
    code, out, _ = run("forget", "--query", "Sam", "--preview", "--reason", "user asked", "--json")
    pv = json.loads(out)
    assert code == 0 and pv["match"] == "word" and pv["counts"]["rules"] == 0
    assert {(i["kind"], int(i["id"])) for i in pv["items"]} == {
        ("memory", ids["holds"]),
        ("memory", ids["possessive"]),
    }
    assert pv["due"] == "30 days left" and not pv["overdue"]
    code, out, _ = run("forget", "--query", "Sam", "--preview", "--reason", "user asked")
    assert "match: word · 2 memories" in out and "[Sam] holds ES futures" in out and "sample" not in out

    code, out, _ = run(
        "forget", "--query", "Sam", "--match", "substring", "--preview", "--reason", "x", "--json"
    )
    sub = json.loads(out)
    assert sub["request_id"] != pv["request_id"] and ("rule", str(ids["rule"])) in {
        (i["kind"], i["id"]) for i in sub["items"]
    }

    rid = str(pv["request_id"])
    code, out, _ = run("forget-request", rid, "--exclude", f"memory:{ids['possessive']}", "--json")
    assert [int(i["id"]) for i in json.loads(out)["items"]] == [ids["holds"]]
    code, out, err = run("forget-request", rid, "--exclude", "nonsense")
    assert code == 2 and err.count("\n") == 1 and "KIND:ID" in err

    code, out, err = run("forget-request", rid, "--withdraw")
    assert code == 2 and "needs --reason" in err and "Traceback" not in err
    code, out, _ = run("forget-request", rid, "--withdraw", "--reason", "wrong person", "--json")
    w = json.loads(out)
    assert (
        w["status"] == "withdrawn"
        and w["scope_value"].startswith("hmac:")
        and parse_actor(w["withdrawn"]["by"]).label == "op"
    )
    code, out, _ = run("forget-requests")
    line = next(x for x in out.splitlines() if x.startswith(rid + " "))
    assert "withdrawn" in line and "closed" in line and "Sam" not in line
    code, out, err = run("forget-request", rid, "--execute")
    assert code != 0 and "withdrawn" in err


def test_fresh_forget_json_says_verified_or_why_not_per_level(run):
    ids = _seed(run)
    code, out, _ = run("forget", "--memory", str(ids["holds"]), "--reason", "user asked", "--json")
    doc = json.loads(out)
    assert doc["levels"] and all(
        {"name", "checked", "line", "checked_what"} <= set(lv) for lv in doc["levels"]
    )
    assert doc["verified"] == (doc["status"] == "verified")
    assert (doc["why_not_verified"] == "") == doc["verified"]
    assert parse_actor(doc["executed_by"]).label == "op" and parse_actor(doc["requested_by"]).label == "op"
    code, out, _ = run("forget-request", str(doc["request_id"]), "--json")
    again = json.loads(out)
    assert [lv["line"] for lv in again["levels"]] == [lv["line"] for lv in doc["levels"]]
    assert again["why_not_verified"] == doc["why_not_verified"]
    code, out, _ = run("forget-request", str(doc["request_id"]))
    assert all(f"{lv['name']}: {lv['line']}" in out for lv in doc["levels"])


@pytest.mark.sqlite_only("the engine test runs the two-person rule on PostgreSQL; this is the CLI's surface")
def test_two_person_rule_between_two_actors(run, tmp_path, monkeypatch):
    """Two operators are two verified identities (logged-in accounts an admin's process starts,
    engine/identity.py), never two --actor labels of one person."""
    conf = tmp_path / "config.toml"
    conf.write_text("[forget]\napprovals = 2\n")
    monkeypatch.setenv("MEMCONSOLE_CONFIG", str(conf))
    ids = _seed(run)
    for who in ("alice", "bob"):
        assert run("operators", "grant", who, "forget")[0] == 0

    def as_(who: str, *args: str):
        monkeypatch.setenv("MEMCONSOLE_OPERATOR", who)
        try:
            return run(*args, actor=who)
        finally:
            monkeypatch.delenv("MEMCONSOLE_OPERATOR")

    code, out, _ = as_(
        "alice", "forget", "--memory", str(ids["holds"]), "--preview", "--reason", "asked", "--json"
    )
    rid = str(json.loads(out)["request_id"])
    code, out, err = as_("alice", "forget-request", rid, "--execute")
    assert code != 0 and err.count("\n") == 1 and "second operator" in err and "--approve" in err
    code, out, err = as_("alice", "forget-request", rid, "--approve")
    assert code != 0 and "alice requested it" in err
    code, out, err = as_("bob", "forget-request", rid, "--approve", "--json")
    assert code == 0 and json.loads(out)["approved_by"] == ["bob"], err
    code, out, err = as_("alice", "forget-request", rid, "--execute", "--json")
    assert code == 0, err
    code, out, _ = run("forget-request", rid)
    assert "requested" in out and "by alice; approved by bob; executed by alice" in out


@pytest.mark.sqlite_only("locates residue in the SQLite file's pages (dbstat)")
def test_residue_located_then_accepted(run):
    code, out, _ = run("add", "The locker code is Quokka-4417-Lantern for the east door", "--no-dedup")
    code, out, _ = run("rule", "add", "Never share Quokka-4417-Lantern with contractors", "--json")
    rule = json.loads(out)["id"]
    code, out, _ = run("forget", "--query", "Quokka-4417-Lantern", "--preview", "--reason", "asked", "--json")
    rid = str(json.loads(out)["request_id"])
    run("forget-request", rid, "--exclude", f"rule:{rule}")
    code, out, _ = run("forget-request", rid, "--execute")
    assert "not verified: residue found" in out and f"piece shared with live rule #{rule}" in out
    assert "--accept-residue" in out and ", page " in out and " of rules" in out
    code, out, err = run("forget-request", rid, "--accept-residue", "--reason", "legal hold", "--json")
    doc = json.loads(out)
    assert doc["status"] == "executed" and doc["residue_accepted"]["reason"] == "legal hold"
    code, out, _ = run("audit", "--action", "forget-accept-residue", "--json")
    assert code == 0 and "legal hold" in out
