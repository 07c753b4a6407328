"""The curator's gateways (`conn.proposals`, `conn.curator_runs`) and read model
(`conn.curator_queries`) on both backends: each adapter's own SQL gives the same answers."""

from __future__ import annotations

import json

import pytest

from engine.audit import log as audit

pytestmark = pytest.mark.backends

DAY = 86400.0


def _memory(conn, content, **cols) -> int:
    return conn.memories.insert_row({"content": content, "created_at": 0.0, "updated_at": 0.0, **cols})


def _rule(conn, text, **cols) -> int:
    return conn.rules.insert({"text": text, "created_at": 0.0, "updated_at": 0.0, **cols})


def test_a_proposal_moves_through_its_states(eng):
    def make(conn):
        run = conn.curator_runs.insert(10.0, 11.0, json.dumps({"x": 1}), "/tmp/r", 7)
        pid = conn.proposals.insert_pending("merge", "memory", "[1, 2]", "text", "{}", "fp1", run, 10.0)
        return run, pid

    run, pid = eng.store.write(make)
    q = lambda fn: eng.store.query(lambda c: fn(c.curator_queries))  # noqa: E731
    r = q(lambda cq: cq.proposal(pid))
    assert (r["status"], r["members"], r["run_id"], r["fingerprint"]) == ("pending", "[1, 2]", run, "fp1")
    assert q(lambda cq: cq.run_proposal_ids(run)) == [pid]
    assert q(lambda cq: cq.latest_run())["watermark"] == 7
    assert q(lambda cq: cq.latest_run(finished=True))["id"] == run
    assert [x["id"] for x in q(lambda cq: cq.runs(5))] == [run]
    assert q(lambda cq: cq.fingerprints()) == {"fp1"}
    assert q(lambda cq: cq.pending_memory_merges()) == [(pid, "[1, 2]")]

    eng.store.write(lambda c: c.proposals.regrow(pid, "[1, 2, 3]", None, '{"a": 1}', "fp2", run))
    assert q(lambda cq: cq.proposal(pid))["members"] == "[1, 2, 3]"
    eng.store.write(lambda c: c.proposals.approved(pid, 12.0, "me", "ok", None))
    r = q(lambda cq: cq.proposal(pid))
    assert (r["status"], r["decided_by"], r["survivor_text"]) == ("approved", "me", None)
    # a decided proposal is not regrown
    eng.store.write(lambda c: c.proposals.regrow(pid, "[9]", None, "{}", "fp3", run))
    assert q(lambda cq: cq.proposal(pid))["members"] == "[1, 2, 3]"
    eng.store.write(lambda c: c.proposals.applied(pid, 13.0, 42, '{"s": 1}'))
    r = q(lambda cq: cq.proposal(pid))
    assert (r["status"], r["result_id"], r["snapshot"]) == ("applied", 42, '{"s": 1}')
    eng.store.write(lambda c: c.proposals.undone(pid, 14.0))
    r = q(lambda cq: cq.proposal(pid))
    assert (r["status"], r["undone_at"], r["snapshot"]) == ("undone", 14.0, None)
    assert q(lambda cq: cq.proposal_status(pid)) == "undone"
    assert q(lambda cq: cq.proposal_status(pid + 100)) is None


def test_listing_filters_and_deleting(eng):
    def make(conn):
        ids = [
            conn.proposals.insert_pending(k, "memory", "[1]", None, "{}", f"fp{i}", 0, 1.0)
            for i, k in enumerate(("merge", "archive", "archive"))
        ]
        conn.proposals.rejected(ids[1], 2.0, "me", "no")
        return ids

    ids = eng.store.write(make)
    q = lambda fn: eng.store.query(lambda c: fn(c.curator_queries))  # noqa: E731
    assert [r["id"] for r in q(lambda cq: cq.list_proposals(None, None, 10))] == ids[::-1]
    assert [r["id"] for r in q(lambda cq: cq.list_proposals("pending", "archive", 10))] == [ids[2]]
    assert [r["id"] for r in q(lambda cq: cq.list_proposals(None, "archive", 1))] == [ids[2]]
    assert [r["id"] for r in q(lambda cq: cq.proposals([ids[2], ids[0], 999]))] == [ids[0], ids[2]]
    assert q(lambda cq: cq.proposals([])) == []
    eng.store.write(lambda c: c.proposals.delete([ids[0], ids[2]]))
    eng.store.write(lambda c: c.proposals.delete([]))
    assert [r["id"] for r in q(lambda cq: cq.list_proposals(None, None, 10))] == [ids[1]]


def test_the_scan_reads(eng):
    now = 1000 * DAY

    def make(conn):
        m = {
            "idle": _memory(conn, "idle one", last_reinforced_at=now - 100 * DAY),
            "stale": _memory(conn, "stale one", created_at=now - 40 * DAY, last_reinforced_at=now - 40 * DAY),
            "fresh": _memory(conn, "fresh one", created_at=now, last_reinforced_at=now),
            "pinned": _memory(conn, "pinned one", pinned=1),
            "learn": _memory(conn, "a learning", category="learning", access_count=5),
            "learn2": _memory(conn, "promoted", category="learning", access_count=5),
            "learn3": _memory(conn, "promoted by text", category="learning", access_count=5),
            "archived": _memory(conn, "archived", category="learning", access_count=5, tier="archived"),
        }
        _rule(conn, "r1", metadata=json.dumps({"promoted_from": m["learn2"]}))
        _rule(conn, "r2", metadata=json.dumps({"promoted_from": str(m["learn3"])}))
        _rule(conn, "r3", metadata="not json")
        r = {
            "dormant": _rule(conn, "dormant", status="dormant", last_reinforced_at=now - 200 * DAY),
            "dormant_new": _rule(conn, "dormant new", status="dormant", last_reinforced_at=now),
            "retired": _rule(conn, "retired", status="retired"),
        }
        audit.append(conn, at=now, actor="t", action="edit", target_kind="memory", target_id=m["idle"])
        audit.append(conn, at=now, actor="t", action="archive", target_kind="memory", target_id=m["stale"])
        return m, r

    m, r = eng.store.write(make)
    q = lambda fn: eng.store.query(lambda c: fn(c.curator_queries))  # noqa: E731
    assert q(lambda cq: cq.max_memory_id()) == max(m.values())
    assert q(lambda cq: cq.memory_ids_after(m["learn"])) == [m["learn2"], m["learn3"], m["archived"]]
    assert q(lambda cq: cq.edited_memory_targets(now)) == [str(m["idle"])]
    assert q(lambda cq: cq.edited_memory_targets(now + 1)) == []
    idle = q(lambda cq: cq.idle_memories(now - 90 * DAY))
    assert {int(x["id"]) for x in idle} >= {m["idle"]} and m["pinned"] not in {x["id"] for x in idle}
    assert {x["id"]: x["last"] for x in idle}[m["idle"]] == now - 100 * DAY
    assert q(lambda cq: cq.idle_memory_count(now - 30 * DAY, now - 90 * DAY)) == 1  # the stale one
    prom = q(lambda cq: cq.promotable_memories(["learning"], 3))
    assert [x["id"] for x in prom] == [m["learn"]]
    assert q(lambda cq: cq.promotable_memories([], 3)) == []
    assert q(lambda cq: cq.promotable_memories(["learning"], 6)) == []
    dormant = q(lambda cq: cq.dormant_rules(now - 100 * DAY))
    assert [(x["id"], x["last"]) for x in dormant] == [(r["dormant"], now - 200 * DAY)]
    assert r["retired"] not in [x["id"] for x in q(lambda cq: cq.open_rules())]
    assert q(lambda cq: cq.mergeable_memories()) == []  # nothing embedded
    agents = q(lambda cq: cq.unabsorbed_memory_agents())
    assert m["archived"] not in agents and m["idle"] in agents
    assert set(q(lambda cq: cq.live_memory_rows([m["idle"], m["archived"]]))) == {m["idle"]}
    rows = q(lambda cq: cq.memory_rows([m["idle"], m["archived"], 10**6]))
    assert set(rows) == {m["idle"], m["archived"]} and rows[m["idle"]]["content"] == "idle one"


def test_member_reads_and_audit_marks(eng):
    def make(conn):
        a = _memory(conn, "alpha", agent="atlas")
        b = _rule(conn, "beta", agent="borg")
        audit.append(conn, at=1.0, actor="t", action="edit", target_kind="memory", target_id=a)
        return a, b

    a, b = eng.store.write(make)
    q = lambda fn: eng.store.query(lambda c: fn(c.curator_queries))  # noqa: E731
    assert q(lambda cq: cq.member_texts("memory", [a, 10**6])) == {a: ("alpha", "atlas")}
    assert q(lambda cq: cq.member_texts("rule", [b])) == {b: ("beta", "borg")}
    assert q(lambda cq: cq.member("memory", a))["content"] == "alpha"
    assert q(lambda cq: cq.member("memory", str(a)))["content"] == "alpha"
    assert q(lambda cq: cq.member("memory", None)) is None
    assert q(lambda cq: cq.member("rule", "x")) is None
    assert q(lambda cq: cq.touched_row("rules", b))["text"] == "beta"
    assert q(lambda cq: cq.touched_row("rules", 10**6)) is None
    assert {"id", "content", "user", "tier"} <= q(lambda cq: cq.columns("memories"))
    with pytest.raises(ValueError):
        q(lambda cq: cq.touched_row("audit", 1))
    cols = q(lambda cq: cq.member_columns("memory", [a, 10**6], ["content", "tier", "user"]))
    assert cols == {a: {"content": "alpha", "tier": "active", "user": ""}}
    with pytest.raises(ValueError, match="not a memories column"):
        q(lambda cq: cq.member_columns("memory", [a], ["content; DROP TABLE memories"]))
    mark = q(lambda cq: cq.audit_mark())
    assert mark > 0
    assert q(lambda cq: cq.first_audit_after(0, "memory", [str(a)]))[0] == str(a)
    assert q(lambda cq: cq.first_audit_after(mark, "memory", [str(a)])) is None
    assert q(lambda cq: cq.first_audit_after(0, "rule", [str(a)])) is None
    assert q(lambda cq: cq.first_audit_after(0, "memory", [])) is None
