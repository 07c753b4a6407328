"""Full-fidelity JSONL: export, import into an empty database, export again — the dumps are equal
(plus the import's own audit row, chained onto the restored trail)."""

from __future__ import annotations

import json
import stat

import pytest

from engine import FixedClock, HashEmbedder, ImportFailed, open_engine
from tests.direct_sql import direct

pytestmark = pytest.mark.backends

T0 = "2026-01-01T00:00:00Z"


def populate(eng) -> None:
    """At least one row of every record type; the tables other modules own get plain rows."""
    eng.sessions.add("s1", agent="a", user="u", title="first", started_at=100.0, metadata={"k": [1, 2]})
    eng.sessions.add("s2", agent="a", parent_session_id="s1", started_at=200.0)
    eng.sessions.add_messages(
        "s1",
        [
            dict(role="user", content="héllo wörld 你好", at=101.5),
            dict(role="assistant", content="hi", at=102.25, tool_name="t", metadata={"x": None}),
        ],
    )
    ids = eng.add_memories(
        [
            dict(
                content="The deploy uses pnpm",
                agent="a",
                category="decision",
                importance=0.7,
                session_id="s1",
            ),
            dict(content="User prefers tea", kind="semantic", user="u", pinned=True),
        ],
        dedup=False,
    )
    eng.memories.archive(ids[0], reason="old")

    def others(conn):
        c = direct(conn)
        c.execute("INSERT INTO meta(key, value) VALUES ('note', 'x')")
        c.execute("INSERT INTO memories(content, created_at, embedded) VALUES ('no vector yet', 5, 0)")
        c.execute(
            "INSERT INTO rules(id, text, score, status, created_at) VALUES (1, 'Never force-push', 8.5, 'critical', 10)"
        )
        c.execute(
            "INSERT INTO rule_history(rule_id, at, old_score, new_score, reason, actor) VALUES (1, 11, 8.5, 9, 'kept', 'op')"
        )
        c.execute(
            "INSERT INTO flows(id, name, steps, triggers) VALUES (1, 'deploy', '[\"build\",\"ship\"]', '[\"deploy\"]')"
        )
        c.execute("INSERT INTO flow_runs(flow_id, outcome, note, at) VALUES (1, 'pass', 'ok', 12)")
        c.execute(
            "INSERT INTO proposals(kind, target_kind, members, fingerprint, created_at, snapshot) VALUES ('merge', 'memory', '[1,2]', 'fp1', 13, '{\"a\":1}')"
        )
        c.execute("INSERT INTO curator_runs(started_at, counts) VALUES (14, '{\"merge\":1}')")
        c.execute(
            "INSERT INTO forget_requests(id, scope_kind, scope_value, reason, requested_by, requested_at, status) VALUES (1, 'memory', '9', 'gdpr', 'op', 15, 'executed')"
        )
        c.execute(
            "INSERT INTO tombstones(request_id, target_kind, target_id, content_sha256, forgotten_at) VALUES (1, 'memory', '9', 'ab', 16)"
        )
        c.execute(
            "INSERT INTO import_watermarks(source, value, updated_at) VALUES ('hermes:/x#state.db', '{\"message_id\":3}', 17)"
        )

    eng.store.write(others)


def records(path) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["type"] == "header"
    return lines[1:]


@pytest.fixture
def eng_b(tmp_path):
    e = open_engine(tmp_path / "b.db", embedder=HashEmbedder(), clock=FixedClock(T0), actor="restorer")
    yield e
    e.close()


def test_roundtrip_every_record_type(eng, eng_b, tmp_path):
    populate(eng)
    f1, f2 = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    ex = eng.importers.export_jsonl(f1)
    assert stat.S_IMODE(f1.stat().st_mode) == 0o600
    want = {
        "meta",
        "session",
        "message",
        "memory",
        "rule",
        "rule_history",
        "flow",
        "flow_run",
        "proposal",
        "curator_run",
        "audit",
        "forget_request",
        "tombstone",
        "import_watermark",
    }
    assert want <= set(ex.records) and ex.vectors == 2

    s = eng_b.importers.jsonl(f1)
    assert s.skipped == {} and s.added == ex.records
    ex2 = eng_b.importers.export_jsonl(f2)
    assert ex2.records == {**ex.records, "audit": ex.records["audit"] + 1} and ex2.vectors == 2


def test_dumps_equal_table_by_table_and_audit_chain_holds(eng, eng_b, tmp_path):
    populate(eng)
    f1, f2 = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    eng.importers.export_jsonl(f1)
    eng_b.importers.jsonl(f1)
    eng_b.importers.export_jsonl(f2)
    a, b = records(f1), records(f2)
    own = [r for r in b if r["type"] == "audit" and r["row"]["actor"] == "restorer"]
    assert len(own) == 1
    assert [r for r in b if r is not own[0]] == a
    # The chain is keyed now (issue 12): the engine's own verification, not a plain sha256 walk.
    check = eng_b.audit.verify()
    assert check.ok and check.rows == len([r for r in b if r["type"] == "audit"]), check.message
    # restored data works: FTS and vectors answer as before
    assert eng_b.sessions.search_messages("你好")[0].message.content == "héllo wörld 你好"
    hit = eng_b.search("prefers tea", k=1)
    assert hit.hits[0].content == "User prefers tea" and hit.mode == "hybrid"


def test_import_twice_adds_nothing_and_conflicts_are_refused(eng, eng_b, tmp_path):
    populate(eng)
    f1 = tmp_path / "a.jsonl"
    eng.importers.export_jsonl(f1)
    eng_b.importers.jsonl(f1)
    again = eng_b.importers.jsonl(f1)
    assert again.added == {} and again.skipped["memory already present"] == 3
    eng_b.store.write(lambda c: direct(c).execute("UPDATE rules SET text = 'changed' WHERE id = 1"))
    with pytest.raises(ImportFailed, match=r"a\.jsonl:\d+: rule 1 already exists with different"):
        eng_b.importers.jsonl(f1)


def test_export_without_vectors_marks_memories_for_backfill(eng, eng_b, tmp_path):
    populate(eng)
    f1 = tmp_path / "a.jsonl"
    ex = eng.importers.export_jsonl(f1, vectors=False)
    assert ex.vectors == 0 and not any("vector" in r for r in records(f1))
    eng_b.importers.jsonl(f1)
    assert eng_b.memories.pending_vectors() == 3
    assert eng_b.memories.backfill_vectors() == 3


@pytest.mark.parametrize(
    "bad, message",
    [
        ('{"type":"session","row":{"id":"x"}', r"bad\.jsonl:3: not valid JSON"),
        ('{"type":"spaceship","row":{"id":1}}', r"bad\.jsonl:3: unknown record type 'spaceship'"),
        ('{"type":"session","row":{"id":"x","warp":1}}', r"bad\.jsonl:3: sessions has no column\(s\) warp"),
        ('{"type":"memory","row":{"id":7,"content":"v"},"vector":"AAAA"}', r"bad\.jsonl:3: a vector must"),
        (
            '{"type":"message","row":{"id":5,"session_id":"nope","content":"x"}}',
            r"bad\.jsonl:3: this message refers to a missing session",
        ),
    ],
)
def test_bad_line_names_file_and_line_and_writes_nothing(eng_b, tmp_path, bad, message):
    p = tmp_path / "bad.jsonl"
    p.write_text(
        '{"type":"header","format":"memconsole-jsonl","version":1}\n'
        '{"type":"session","row":{"id":"ok","agent":"a"}}\n' + bad + "\n",
        encoding="utf-8",
    )
    with pytest.raises(ImportFailed, match=message):
        eng_b.importers.jsonl(p)
    assert direct(eng_b.store).one("SELECT count(*) FROM sessions")[0] == 0
    assert direct(eng_b.store).one("SELECT count(*) FROM audit")[0] == 0


def test_a_file_without_header_is_refused(eng_b, tmp_path):
    p = tmp_path / "plain.jsonl"
    p.write_text('{"type":"session","id":"x"}\n')
    with pytest.raises(ImportFailed, match=r"plain\.jsonl:1: not a memconsole export.*use `ingest`"):
        eng_b.importers.jsonl(p)


def test_dry_run_restores_nothing(eng, eng_b, tmp_path):
    populate(eng)
    f1 = tmp_path / "a.jsonl"
    ex = eng.importers.export_jsonl(f1)
    s = eng_b.importers.jsonl(f1, dry_run=True)
    assert s.dry_run and s.added == ex.records
    assert direct(eng_b.store).one("SELECT count(*) FROM memories")[0] == 0
    assert direct(eng_b.store).one("SELECT count(*) FROM audit")[0] == 0
