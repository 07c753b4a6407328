"""The recall log (issue #26): one row per agent recall written in the access write, retention,
the off switch, forget reaching it (canary residue 0), replay naming the merge / forget that
changed an answer, and retrieval checks failing after a curator approval. Both backends."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import InvalidInput, NotFound
from engine.config import RecallsSettings
from engine.recalls import log as recall_log
from tests.direct_sql import direct

pytestmark = pytest.mark.backends

CANARY = "Canary-Heron-51d2e7-Wombat"
SECRET = f"The boathouse code {CANARY} opens the west shed"
TWIN = f"The boathouse code {CANARY} opens the west shed!"


def log_rows(eng) -> list:
    return direct(eng.store).all("SELECT * FROM recall_log ORDER BY id")


def test_an_agent_recall_is_logged_once_with_what_it_returned(eng):
    a = eng.add_memory("the deploy key lives in vault path kv/deploy", agent="bob")
    eng.add_memory("bob likes green tea in the morning", agent="bob")
    res = eng.search("deploy key vault", k=3, agent="bob", door="mcp", for_agent="bob")
    assert [h.id for h in res.hits][:1] == [a]
    (rec,) = eng.recalls.list()
    assert (rec.door, rec.agent, rec.actor, rec.query, rec.k) == (
        "mcp",
        "bob",
        "tester",
        "deploy key vault",
        3,
    )
    assert rec.filters == {"agent": "bob", "tier": ["core", "active"]}
    assert rec.hit_ids == [h.id for h in res.hits]
    assert [h.score for h in rec.hits] == [h.score for h in res.hits]
    assert rec.hits[0].parts["bm25_rank"] == res.hits[0].breakdown.bm25_rank
    assert (
        rec.mode == res.mode and rec.model == "hash-384" and rec.latency_ms is not None and rec.latency_ms > 0
    )
    # An operator's search (no access recorded, no door) is not an agent's recall: nothing logged.
    eng.search("deploy key", record_access=False)
    # A recall with no hits is logged too (the miss is what an operator looks for).
    eng.search("zzzqqq nothing", door="hermes", for_agent="coder", record_access=False, mode="keyword")
    got = eng.recalls.list()
    assert [r.query for r in got] == ["zzzqqq nothing", "deploy key vault"] and got[0].hits == []
    assert [r.id for r in eng.recalls.list(agent="coder")] == [got[0].id]
    assert [r.id for r in eng.recalls.list(text="DEPLOY")] == [rec.id]
    assert eng.recalls.list(since="2030-01-01") == []
    assert eng.recalls.get(rec.id).query == "deploy key vault"
    with pytest.raises(NotFound):
        eng.recalls.get(999)
    # A search recording access is a recall (the CLI's search): logged as the engine's door.
    eng.search("green tea")
    assert eng.recalls.list(limit=1)[0].door == "engine"


def test_the_log_is_off_with_recalls_log_false(eng):
    from dataclasses import replace

    eng.settings = replace(eng.settings, recalls=RecallsSettings(log=False))
    eng.add_memory("something to find here")
    eng.search("something to find", door="mcp")
    assert log_rows(eng) == []


def test_retention_prunes_old_and_extra_rows_and_audits_it(eng, clock, monkeypatch):
    from dataclasses import replace

    eng.add_memory("alpha bravo charlie")
    eng.settings = replace(eng.settings, recalls=RecallsSettings(keep_days=30, max_rows=5))
    monkeypatch.setattr(recall_log, "PRUNE_EVERY", 4)
    for _ in range(3):
        eng.search("alpha", door="mcp")
    clock.advance(40 * 86_400)  # those three are now past keep_days
    for _ in range(9):
        eng.search("alpha", door="mcp")
    rows = log_rows(eng)
    # pruned at ids 4 (nothing old yet... but max_rows 5 kept 5) , 8 and 12: the old three went
    assert len(rows) <= 5 + 3 and all(r["at"] > clock.now() - 31 * 86_400 for r in rows)
    assert rows[-1]["id"] == 12
    pruned = [e for e in eng.audit.log(limit=100) if e.action == "recalls-pruned"]
    assert pruned and sum(e.summary["deleted"] for e in pruned) == 12 - len(rows)
    assert eng.recalls.prune() >= 0


def test_forget_redacts_the_logged_query_and_takes_the_forgotten_hits(eng, db_path):
    a = eng.add_memory(SECRET, agent="atlas", dedup=False)
    keep = eng.add_memory("The west shed holds the canoe paddles", agent="atlas", dedup=False)
    eng.search(f"where is {CANARY} used", door="mcp", for_agent="atlas")
    eng.search("west shed", door="mcp", for_agent="atlas")
    assert any(CANARY in r["query"] for r in log_rows(eng))
    assert any(f" {a} " in r["hit_ids"] for r in log_rows(eng))
    res = eng.forget.run("query", CANARY, "user asked")
    assert res.counts["recalls"] >= 1
    rows = log_rows(eng)
    assert len(rows) == 2  # the rows stay; the forgotten text and ids go
    assert not any(CANARY.lower() in r["query"].lower() for r in rows)
    assert "[forgotten]" in rows[0]["query"]
    assert all(f" {a} " not in r["hit_ids"] and f'"id":{a},' not in r["hits"] for r in rows)
    assert eng.recalls.get(rows[0]["id"]).forgotten == [(1, res.request_id)]
    assert keep in eng.recalls.get(rows[1]["id"]).hit_ids
    if isinstance(db_path, Path):  # the byte scan of the file and its WAL covers the log
        assert res.status == "verified" and res.residue == 0
        for f in [Path(f"{db_path}{s}") for s in ("", "-wal")]:
            if f.exists():
                assert CANARY.encode() not in f.read_bytes()


def test_replay_names_the_merge_and_the_forget_that_changed_the_answer(eng):
    a = eng.add_memory(SECRET, agent="atlas", dedup=False)
    b = eng.add_memory(TWIN, agent="atlas", dedup=False)
    eng.search("boathouse code west shed", k=5, door="mcp", for_agent="atlas")
    rid = eng.recalls.list()[0].id
    assert set(eng.recalls.get(rid).hit_ids) == {a, b}
    assert eng.recalls.replay(rid).same
    prop = eng.curator.run().proposals[0]
    p = eng.curator.approve(prop.id)
    d = eng.recalls.replay(rid)
    assert {c.memory_id: c.cause for c in d.left} == {
        a: f"merged into #{p.result_id} (proposal #{p.id})",
        b: f"merged into #{p.result_id} (proposal #{p.id})",
    }
    assert [(c.memory_id, c.cause) for c in d.entered] == [
        (p.result_id, f"merge survivor (proposal #{p.id})")
    ]
    # A second recall returns the survivor; forgetting it shows as the forget case.
    eng.search("boathouse code west shed", k=5, door="mcp", for_agent="atlas")
    rid2 = eng.recalls.list()[0].id
    case = eng.forget.run("memory", str(p.result_id), "user asked")
    d2 = eng.recalls.replay(rid2)
    # the log no longer holds the forgotten id: its place, and the case that took it, stay
    left = [(c.memory_id, c.was_rank, c.cause) for c in d2.left]
    assert left == [(None, 1, f"forgotten by case #{case.request_id}")]
    # why-not for the logged query and filters
    ex = eng.recalls.why_not(rid, a)
    assert ex.memory_id == a and not ex.in_top_k


def test_a_pinned_check_fails_after_a_curator_approval_and_says_why(eng):
    a = eng.add_memory(SECRET, agent="atlas", dedup=False)
    eng.add_memory(TWIN, agent="atlas", dedup=False)
    c = eng.checks.add("boathouse code", a, k=2, agent="atlas")
    assert c.status == "pass" and c.last_rank in (1, 2) and not c.due
    assert eng.checks.failing() == []
    p = eng.curator.approve(eng.curator.run().proposals[0].id)
    assert eng.checks.get(c.id).due  # marked in the approval's own write
    (bad,) = eng.checks.failing()  # what is due runs first
    assert bad.id == c.id and bad.status == "FAIL" and bad.last_why
    assert eng.checks.run().ok is False
    eng.curator.undo(p.id)
    assert eng.checks.failing() == []
    # from a logged recall: its query, filters and k
    eng.search("boathouse code", k=3, door="mcp", for_agent="atlas", agent="atlas")
    c2 = eng.checks.add_from_recall(eng.recalls.list()[0].id, a)
    assert (c2.query, c2.k, c2.filters["agent"], c2.status) == ("boathouse code", 3, "atlas", "pass")
    eng.checks.remove(c2.id)
    assert [x.id for x in eng.checks.list()] == [c.id]
    actions = [e.action for e in eng.audit.log(limit=100)]
    assert "check-add" in actions and "check-remove" in actions
    with pytest.raises(NotFound):
        eng.checks.add("boathouse", 99999)
    with pytest.raises(InvalidInput):
        eng.checks.add("  ", a)
    with pytest.raises(NotFound):
        eng.checks.remove(c2.id)
