"""The memories, sessions and messages gateways and the memory read model, on both backends: each
adapter's own SQL gives the same answers (id sets as arrays on PostgreSQL, chunks on SQLite)."""

from __future__ import annotations

import pytest

from engine.retrieval.filters import Filters

pytestmark = pytest.mark.backends


def _mem(content: str, agent: str = "a", **over):
    n = {
        "content": content, "kind": "semantic", "category": "general", "tier": "active",
        "agent": agent, "user": "u", "importance": 0.5, "metadata": {}, "metadata_json": "{}",
        "session_id": None, "message_id": None, "pinned": 0, "created_at": None,
    }  # fmt: skip
    n.update(over)
    return n


def test_memory_rows_insert_update_delete(eng):
    def write(c):
        a = c.memories.insert(_mem("alpha"), created=10.0, now=11.0)
        b = c.memories.insert_row({"content": "beta", "agent": "a", "user": "u", "created_at": 5.0})
        c.memories.update(a, {"importance": 0.9, "user": "v"}, now=12.0)
        c.memories.reinforce(b, 0.7, 13.0, count_access=True)
        return a, b

    a, b = eng.store.write(write)
    ra = eng.store.query(lambda c: c.memories.row(a))
    rb = eng.store.query(lambda c: c.memories.row(b))
    assert (ra["importance"], ra["user"], ra["updated_at"], ra["last_reinforced_at"]) == (
        0.9,
        "v",
        12.0,
        10.0,
    )
    assert (rb["strength"], rb["access_count"], rb["last_accessed_at"]) == (0.7, 1, 13.0)
    with pytest.raises(ValueError):
        eng.store.write(lambda c: c.memories.update(a, {"id": 3}, now=1.0))
    with pytest.raises(ValueError):
        eng.store.write(lambda c: c.memories.unlink("content", [1]))
    assert eng.store.write(lambda c: c.memories.delete([a, b, 999])) == 2
    assert eng.store.write(lambda c: c.memories.delete([])) == 0
    assert eng.store.query(lambda c: c.memories.row(a)) is None


def test_unlink_and_unabsorb(eng):
    sid = eng.sessions.add("s1", agent="a")
    mid = eng.sessions.add_message(sid, "user", "hello")
    m1 = eng.memories.add("one", session_id=sid, message_id=mid, dedup=False)
    m2 = eng.memories.add("two", dedup=False)
    eng.store.write(lambda c: c.memories.update(m2, {"tier": "archived", "absorbed_into": m1}, now=1.0))
    eng.store.write(lambda c: c.memories.unlink("message_id", [mid]))
    eng.store.write(lambda c: c.memories.unlink("session_id", [sid]))
    eng.store.write(lambda c: c.memories.unabsorb([m2]))
    r1 = eng.store.query(lambda c: c.memories.row(m1))
    r2 = eng.store.query(lambda c: c.memories.row(m2))
    assert (r1["session_id"], r1["message_id"]) == (None, None)
    assert (r2["tier"], r2["absorbed_into"]) == ("active", None)


def test_sessions_and_messages(eng):
    eng.store.write(lambda c: c.sessions.insert({"id": "p", "agent": "a", "user": "u", "title": "Parent"}))
    eng.store.write(lambda c: c.sessions.insert({"id": "k", "agent": "a", "parent_session_id": "p"}))
    ids = eng.store.write(
        lambda c: [c.messages.insert("p", "user", f"m{i}", None, float(i), 1, "{}") for i in range(3)]
    )
    assert eng.store.query(lambda c: c.sessions.exists("p")) and not eng.store.query(
        lambda c: c.sessions.exists("x")
    )
    assert [m[1] for m in eng.store.query(lambda c: c.messages.held("p"))] == ["m0", "m1", "m2"]
    eng.store.write(lambda c: c.sessions.update("p", {"title": "New"}))
    with pytest.raises(ValueError):
        eng.store.write(lambda c: c.sessions.update("p", {"agent": "b"}))
    assert eng.store.query(lambda c: c.memory_queries.session("p"))["n"] == 3
    eng.store.write(lambda c: c.messages.delete(ids[:1]))
    assert eng.store.query(lambda c: c.messages.row(ids[0])) is None
    eng.store.write(lambda c: c.sessions.clear_titles(["p"]))
    assert eng.store.query(lambda c: c.sessions.row("p"))["title"] == ""
    eng.store.write(lambda c: c.messages.delete_of(["p"]))
    eng.store.write(lambda c: c.sessions.delete(["p"]))
    assert eng.store.query(lambda c: c.sessions.row("k"))["parent_session_id"] is None
    assert eng.store.query(lambda c: c.sessions.row("p")) is None


def test_memory_read_model(eng):
    sid = eng.sessions.add("s1", agent="a", title="Kitchen Talk")
    ids = [
        eng.memories.add(f"note {i} about 50%_off", agent="a", session_id=sid, dedup=False) for i in range(4)
    ]
    other = eng.memories.add("unrelated", agent="b", user="bob", dedup=False)
    q = eng.store.query
    assert q(lambda c: c.memory_queries.same_text("unrelated", "b")) == other
    assert q(lambda c: c.memory_queries.same_text("unrelated", "a")) is None
    assert [r["id"] for r in q(lambda c: c.memory_queries.listed(agent="a", limit=2))] == ids[::-1][:2]
    assert q(lambda c: c.memory_queries.id_range()) == (other, ids[0])
    assert q(lambda c: c.memory_queries.tier_counts()) == {"active": 5}
    assert sorted(r["id"] for r in q(lambda c: c.memory_queries.rows([*ids, 999]))) == ids
    assert sorted(r["id"] for r in q(lambda c: c.memory_queries.weighting(ids, metadata=True))) == ids
    near = {m: (b, a) for m, b, a in q(lambda c: c.memory_queries.session_neighbours(ids, Filters()))}
    assert near[ids[1]] == (ids[0], ids[2]) and near[ids[0]] == (None, ids[1])
    assert q(lambda c: c.memory_queries.like_ranked(["%NOTE 2%"], Filters(), 5)) == [ids[2]]
    assert q(lambda c: c.memory_queries.like_ranked(["%about 50\\%%"], Filters(user="bob"), 5)) == []
    assert list(q(lambda c: list(c.memory_queries.all_ids()))) == [*ids, other]
    assert q(lambda c: c.memory_queries.text_length([other])) == len("unrelated")
    assert dict(q(lambda c: list(c.memory_queries.texts([other])))) == {other: "unrelated"}
    assert [r["id"] for r in q(lambda c: c.memory_queries.sessions(text="kitchen"))] == ["s1"]
    assert q(lambda c: c.memory_queries.sessions(text="kitch\\")) == []
    tiers, rules, pending, forgets, sessions = q(lambda c: c.memory_queries.counts())
    assert (tiers, sessions) == ({"active": 5}, 1)


def test_meta_rows(eng):
    eng.store.write(lambda c: c.meta.put("t.k", "1"))
    eng.store.write(lambda c: c.meta.put("t.k", "2"))
    eng.store.write(lambda c: c.meta.put_missing("t.k", "3"))
    eng.store.write(lambda c: c.meta.put_missing("t.new", "4"))
    assert eng.store.query(lambda c: c.meta.get("t.k")) == "2"
    assert eng.store.query(lambda c: c.meta.get("t.none")) is None
    held = eng.store.query(lambda c: c.meta.all())
    assert held["t.k"] == "2" and held["t.new"] == "4"
