"""The importers' storage: the `import_watermarks` gateway, the imports read model and the dump's
typed reads (rows and counts leaving meta's identity out, a row by its key, savepoints), the same
on both backends."""

from __future__ import annotations

import pytest

from engine.audit import log as audit

pytestmark = pytest.mark.backends


def test_a_watermark_is_added_then_moved(eng):
    store = eng.ctx.store
    assert store.query(lambda c: c.import_watermarks.value("hermes:/x")) is None
    store.write(lambda c: c.import_watermarks.put("hermes:/x", '{"message_id": 3}', 10.0))
    assert store.query(lambda c: c.import_watermarks.value("hermes:/x")) == '{"message_id": 3}'
    store.write(lambda c: c.import_watermarks.put("hermes:/x", '{"message_id": 7}', 11.0))
    assert store.query(lambda c: c.import_watermarks.value("hermes:/x")) == '{"message_id": 7}'
    assert store.query(lambda c: c.import_watermarks.value("hermes:/y")) is None


def test_what_importers_look_up(eng):
    store = eng.ctx.store
    eng.memories.add("uses tabs", agent="a", dedup=False)
    skill = eng.memories.add(
        "deploy: run it", kind="procedural", category="task", agent="a", metadata={"hermes_skill": "deploy"}
    )
    eng.flows.add("release", ["build", "ship"], agent="a")
    eng.sessions.add("s1", agent="a", title="first", metadata={"k": 1})
    eng.sessions.add_message("s1", "user", "hi", metadata={"hermes_id": 41})
    eng.sessions.add_message("s1", "assistant", "hello", metadata={"hermes_id": 42})
    eng.sessions.add_message("s1", "user", "no id")
    store.write(
        lambda c: audit.append(
            c,
            at=1.0,
            actor="hermes-curator",
            action="curator-run",
            target_kind="hermes-curator-run",
            target_id="r1",
        )
    )

    def look(c):
        q = c.imports_queries
        return {
            "db": q.database_id(),
            "mem": (
                q.memory_exists("a", "uses tabs"),
                q.memory_exists("b", "uses tabs"),
                q.memory_exists("a", "x"),
            ),
            "skill": q.skill_memory("a", "deploy"),
            "no_skill": (q.skill_memory("b", "deploy"), q.skill_memory("a", "other")),
            "flow": q.flow_named("release"),
            "no_flow": q.flow_named("nope"),
            "sessions": (q.session_exists("s1"), q.session_exists("s2")),
            "state": q.session_state("s1"),
            "no_state": q.session_state("s2"),
            "ids": (q.hermes_message_ids("s1"), q.hermes_message_ids("s2")),
            "audited": (
                q.audited("hermes-curator-run", "r1", "hermes-curator"),
                q.audited("hermes-curator-run", "r1", "someone"),
                q.audited("hermes-curator-run", "r2", "hermes-curator"),
            ),
        }

    got = store.query(look)
    assert isinstance(got["db"], str) and got["db"]
    assert got["mem"] == (True, False, False)
    assert got["skill"]["id"] == skill and got["skill"]["content"] == "deploy: run it"
    assert got["no_skill"] == (None, None)
    assert got["flow"]["agent"] == "a" and got["flow"]["name"] == "release" and got["no_flow"] is None
    assert got["sessions"] == (True, False)
    assert (got["state"]["agent"], got["state"]["title"], got["state"]["ended_at"]) == ("a", "first", None)
    assert '"k"' in got["state"]["metadata"] and got["no_state"] is None
    assert got["ids"] == ({"41", "42"}, set())
    assert got["audited"] == (True, False, False)


def test_the_dump_reads_by_typed_selection(eng):
    store, dump = eng.ctx.store, eng.ctx.store.dump
    mid = eng.memories.add("one", agent="a")
    eng.sessions.add("s1", agent="a")

    def look(c):
        meta = dump.meta(c)
        return {
            "meta": meta,
            "all": dump.count(c, "meta"),
            "left": dump.count(c, "meta", leave_out=["database_id", "app"]),
            "rows": [r[0] for r in dump.rows(c, "meta", ["key"], leave_out=["database_id"])],
            "any": (dump.any_row(c, "memories"), dump.any_row(c, "rules")),
            "row": dump.row(c, "sessions", ["id"], ["s1"]),
            "none": dump.row(c, "sessions", ["id"], ["s2"]),
            "ids": (dump.has_id(c, "memories", mid), dump.has_id(c, "memories", mid + 100)),
        }

    got = store.query(look)
    assert "database_id" in got["meta"] and "app" in got["meta"]
    assert got["left"] == got["all"] - 2
    assert "database_id" not in got["rows"] and len(got["rows"]) == got["all"] - 1
    assert got["any"] == (True, False)
    assert got["row"]["id"] == "s1" and got["row"]["agent"] == "a" and got["none"] is None
    assert got["ids"] == (True, False)


def test_a_savepoint_undoes_a_batch_and_keeps_the_rest(eng):
    store, dump = eng.ctx.store, eng.ctx.store.dump

    def write(c):
        c.import_watermarks.put("kept", "1", 1.0)
        dump.savepoint(c)
        c.import_watermarks.put("undone", "2", 1.0)
        dump.rollback_savepoint(c)
        dump.release_savepoint(c)
        dump.savepoint(c)
        c.import_watermarks.put("released", "3", 1.0)
        dump.release_savepoint(c)

    store.write(write)
    got = store.query(lambda c: [c.import_watermarks.value(s) for s in ("kept", "undone", "released")])
    assert got == ["1", None, "3"]
