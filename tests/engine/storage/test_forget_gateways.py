"""The forget area's gateways (forget_requests, tombstones), its read model and the eraser's
scrub places on both backends: what each adapter's own SQL must agree on (JSON read only where it
is valid, numbers compared as numbers, LIKE as SQLite reads it, the fixed sets of names)."""

from __future__ import annotations

import json

import pytest

from engine.storage.erasure import SCRUBBED

pytestmark = pytest.mark.backends


def raw(c, backend, sql, params=()):
    """A row put in place directly (a test's fixture, not a writer of the engine)."""
    if backend == "sqlite":
        return c.execute(sql, params)
    return c.execute(sql.replace("?", "%s"), params)


def test_a_case_moves_through_its_states(eng):
    rid = eng.store.write(lambda c: c.forget_requests.insert("query", "needle", "why", "me", 1.0, 9.0))
    assert eng.store.query(lambda c: c.forget_requests.open_case("query", "needle")) == rid
    assert eng.store.query(lambda c: c.forget_requests.open_case("query", "other")) is None
    eng.store.write(lambda c: c.forget_requests.previewed(rid, {"memories": [1]}, {"memories": 1}))
    row = eng.store.query(lambda c: c.forget_requests.get(rid))
    assert row["status"] == "previewed" and json.loads(row["selected"]) == {"memories": [1]}
    assert eng.store.query(lambda c: c.forget_requests.open_case("query", "needle")) == rid
    counts = {"memories": 1, "audit_head": [5, "h"]}
    eng.store.write(lambda c: c.forget_requests.executed(rid, 2.0, "hmac:x", "r", {"memories": [1]}, counts))
    assert eng.store.query(lambda c: c.forget_requests.open_case("query", "needle")) is None
    assert eng.store.query(lambda c: c.forget_requests.executed_count()) == 1
    eng.store.write(lambda c: c.forget_requests.set_residue(rid, 3))
    eng.store.write(lambda c: c.forget_requests.verified(rid, 0, "verified", 3.0, counts))
    row = eng.store.query(lambda c: c.forget_requests.get(rid))
    assert (row["status"], row["residue"], row["verified_at"], row["scope_value"]) == (
        "verified",
        0,
        3.0,
        "hmac:x",
    )
    assert [r["id"] for r in eng.store.query(lambda c: c.forget_requests.listed("verified", 10))] == [rid]
    assert eng.store.query(lambda c: c.forget_requests.listed("open", 10)) == []
    assert len(eng.store.query(lambda c: c.forget_requests.listed(None, 10))) == 1
    assert eng.store.query(lambda c: c.forget_requests.get(rid + 100)) is None


def test_cases_with_an_audit_head_are_read_only_where_the_json_says_so(eng, backend):
    def case(counts: str, status: str = "executed") -> int:
        def write(c):
            rid = c.forget_requests.insert("memory", "1", "r", "me", 1.0, 2.0)
            raw(
                c,
                backend,
                "UPDATE forget_requests SET status = ?, counts = ? WHERE id = ?",
                (status, counts, rid),
            )
            return rid

        return eng.store.write(write)

    good = case('{"audit_head": [7, "h"]}')
    low = case('{"audit_head": [2, "h"]}')
    case('{"audit_head": ["x", "h"]}')  # not a number: the caller's check drops it on SQLite
    case('{"audit_head": {"0": 9}}')
    case("not json {")
    case('{"audit_head": [9, "h"]}', status="previewed")
    real = case('{"audit_head": [8.0, "h"]}', status="verified")
    got = {i for i, raw_counts in eng.store.query(lambda c: c.forget_requests.with_audit_head(5))
           if isinstance(json.loads(raw_counts)["audit_head"][0], (int, float))}  # fmt: skip
    assert got == {good, real}
    every = {i for i, _ in eng.store.query(lambda c: c.forget_requests.with_audit_head(0))}
    assert {good, low, real} <= every


def test_tombstones_match_by_kind_and_hash(eng, backend):
    eng.store.write(lambda c: c.forget_requests.insert("memory", "1", "r", "me", 1.0, 2.0))
    assert not eng.store.query(lambda c: c.tombstones.any_content())
    eng.store.write(lambda c: c.tombstones.insert(1, "session", "s1", "ih", None, 1.0))
    assert not eng.store.query(lambda c: c.tombstones.any_content())
    eng.store.write(lambda c: c.tombstones.insert(1, "memory", "5", None, "ch", 1.0))
    eng.store.write(
        lambda c: raw(c, backend, "INSERT INTO tombstones(request_id, target_kind, target_id, content_sha256,"
                      " forgotten_at) VALUES (1, 'session', 'old-sid', 'abc', 1.0)")
    )  # fmt: skip

    def look(c):
        t = c.tombstones
        return (
            t.any_content(), t.has_ident("session", "ih"), t.has_ident("memory", "ih"),
            t.has_content(["memory"], "ch"), t.has_content(["rule", "message"], "ch"),
            t.has_content(("memory", "message", "rule"), "ch"), t.has_legacy_session("old-sid"),
            t.has_legacy_session("s1"), t.has_legacy_content("session", "abc"),
            t.has_legacy_content("session", ""),
        )  # fmt: skip

    assert eng.store.query(look) == (True, True, False, True, False, True, True, False, True, False)


def test_the_read_model_selects_by_owner_text_and_cascade(eng, backend):
    def setup(c):
        for agent, user, content, meta in (
            ("a1", "u1", "The Wombat lives here", "{}"),
            ("a1", "u2", "plain", '{"note": "50% off_sale"}'),
            ("a2", "u1", "other", "{}"),
        ):
            raw(c, backend, 'INSERT INTO memories(content, agent, "user", metadata) VALUES (?, ?, ?, ?)',
                (content, agent, user, meta))  # fmt: skip
        raw(c, backend, "UPDATE memories SET absorbed_into = 3 WHERE id IN (1, 2)")
        for text, meta in (
            ("r1", '{"promoted_from": 1}'), ("r2", '{"promoted_from": "1"}'), ("r3", "broken {"),
            ("r4", '{"promoted_from": 2.0}'), ("r5", '[1]'), ("r6", '{"promoted_from": 3}'),
        ):  # fmt: skip
            raw(c, backend, "INSERT INTO rules(text, agent, metadata) VALUES (?, 'a1', ?)", (text, meta))
        raw(c, backend, "INSERT INTO flows(name, agent, description) VALUES ('f1', 'a1', 'opens the door')")

    eng.store.write(setup)

    def look(c):
        q = c.forget_queries
        return (
            sorted(q.ids_by("memories", "agent", ["a1"])), sorted(q.ids_by("memories", "user", ["u1"])),
            sorted(q.ids_by("rules", "agent", ["a1"])), q.ids_by("flows", "agent", ["zz"]),
            q.ids_by("memories", "agent", []), q.existing_memories([1, 3, 99]),
            q.absorbed_into(1), q.absorbed_into(3), q.absorbed_into(99), sorted(q.sources_of(3)),
            sorted(q.promoted_from([1, 2])), q.promoted_from([]),
            sorted(q.text_matches("memories", ["content"], ["%wombat%"])),
            q.text_matches("memories", ["metadata"], ["%50\\% off\\_sale%"]),
            q.text_matches("memories", ["metadata"], ["%50\\% offxsale%"]),
            sorted(q.column_of("memories", "content", [2, 3, 99])),
            q.flows_of([1]), len(q.text_rows("flows", ["name", "description"])),
        )  # fmt: skip

    got = eng.store.query(look)
    assert got == (
        [1, 2], [1, 3], [1, 2, 3, 4, 5, 6], [], [], {1, 3}, 3, None, None, [1, 2], [1, 4], [],
        [1], [2], [], [(2, "plain"), (3, "other")], [(1, "f1", "opens the door", "[]", "[]")], 1,
    )  # fmt: skip


def test_names_outside_the_fixed_sets_are_refused(eng):
    for bad in (
        lambda c: c.forget_queries.column_of("memories", "id; DROP TABLE x", [1]),
        lambda c: c.forget_queries.column_of("audit", "reason", [1]),
        lambda c: c.forget_queries.ids_by("rules", "text", ["x"]),
        lambda c: c.forget_queries.text_rows("memories", ["agent"]),
        lambda c: c.forget_requests._set(1, {"requested_by": "x"}),
    ):
        with pytest.raises(ValueError):
            eng.store.query(bad)
    with pytest.raises(ValueError):
        eng.store.query(lambda c: eng.store.eraser.quoting(c, "memories", "content", 4))


def test_the_eraser_reads_and_rewrites_only_its_places(eng, backend):
    assert ("forget_requests", "reason", False, "id") in SCRUBBED
    sid = eng.sessions.add(agent="atlas", title="the secret title")
    eng.store.write(
        lambda c: raw(c, backend, "UPDATE sessions SET metadata = ? WHERE id = ?", ('{"k": "ab"}', sid))
    )
    er = eng.store.eraser
    assert eng.store.query(lambda c: er.quoting(c, "sessions", "title", 4)) == [(sid, "the secret title")]
    assert eng.store.query(lambda c: er.quoting(c, "sessions", "metadata", 12)) == []
    eng.store.write(lambda c: er.overwrite(c, "sessions", "title", sid, "the [redacted] title"))
    assert eng.store.query(lambda c: er.quoting(c, "sessions", "title", 4)) == [(sid, "the [redacted] title")]
