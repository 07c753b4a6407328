"""doctor: each kind of damage is found, named, and (where derived) repaired; tamper evidence in
the audit chain. Damage is made with raw SQL on a real file, the way a bug or an intruder would."""

from __future__ import annotations

import pytest

from console.cli import main
from engine import HashEmbedder, open_engine
from tests.direct_sql import direct

pytestmark = pytest.mark.backends


def _check(report, name):
    return next(c for c in report.checks if c.name == name)


def _failing(report):
    return {c.name for c in report.checks if not c.ok}


@pytest.fixture
def filled(eng):
    sid = eng.sessions.add("s1", agent="a")
    eng.sessions.add_messages(sid, [{"role": "user", "content": f"message number {i}"} for i in range(5)])
    ids = [
        eng.add_memory(f"memory about topic {w}", agent="a")
        for w in ("apples", "pears", "plums", "kiwis", "figs")
    ]
    return eng, ids


@pytest.mark.sqlite_only(
    "tampers with SQLite's FTS5 / vec0 / sqlite_sequence internals; PostgreSQL's own in tests/postgres/test_pg_doctor.py"
)
def test_healthy_database_passes_every_check(filled):
    eng, ids = filled
    r = eng.health.doctor()
    assert r.ok, _failing(r)
    assert r.counts["memories"] == r.counts["memories_fts"] == r.counts["memories_vec"] == 5
    assert r.counts["messages_fts"] == 5 and r.pending_vectors == []
    assert _check(r, "audit-chain").ok


@pytest.mark.sqlite_only(
    "tampers with SQLite's FTS5 / vec0 / sqlite_sequence internals; PostgreSQL's own in tests/postgres/test_pg_doctor.py"
)
def test_fts_entry_lost_is_found_and_rebuilt(filled):
    eng, ids = filled
    c = direct(eng.store)
    row = c.execute("SELECT content FROM memories WHERE id = ?", (ids[1],)).fetchone()
    c.execute(
        "INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', ?, ?)", (ids[1], row[0])
    )
    r = eng.health.doctor()
    assert not r.ok
    assert {"fts-ids:memories_fts", "fts-integrity:memories_fts"} <= _failing(r)
    assert ids[1] in _check(r, "fts-ids:memories_fts").ids
    assert eng.search("pears", mode="keyword", record_access=False).hits == []
    fixed = eng.health.doctor(repair=True)
    assert fixed.ok, _failing(fixed)
    assert any("full-text" in a for a in fixed.repaired)
    assert [h.id for h in eng.search("pears", mode="keyword").hits] == [ids[1]]


@pytest.mark.sqlite_only(
    "tampers with SQLite's FTS5 / vec0 / sqlite_sequence internals; PostgreSQL's own in tests/postgres/test_pg_doctor.py"
)
def test_missing_and_orphan_vectors_are_found_and_repaired(filled):
    eng, ids = filled
    c = direct(eng.store)
    c.execute("DELETE FROM memories_vec WHERE memory_id = ?", (ids[0],))
    c.execute(
        "INSERT INTO memories_vec(memory_id, embedding, tier, kind, category, agent, user) "
        "SELECT 9999, embedding, tier, kind, category, agent, user FROM memories_vec "
        "WHERE memory_id = ?",
        (ids[2],),
    )
    r = eng.health.doctor()
    assert _check(r, "vectors:missing").ids == [ids[0]]
    assert _check(r, "vectors:orphans").ids == [9999]
    fixed = eng.health.doctor(repair=True)
    assert fixed.ok, _failing(fixed)
    assert fixed.counts["memories_vec"] == 5
    assert eng.vectors.vector_of(ids[0]) is not None and eng.vectors.vector_of(9999) is None


@pytest.mark.sqlite_only(
    "tampers with SQLite's FTS5 / vec0 / sqlite_sequence internals; PostgreSQL's own in tests/postgres/test_pg_doctor.py"
)
def test_stale_vector_metadata_is_resynced(filled):
    eng, ids = filled
    c = direct(eng.store)
    c.execute("DROP TRIGGER memories_vec_meta")  # a bug that skipped the sync
    c.execute("UPDATE memories SET tier = 'archived' WHERE id = ?", (ids[3],))
    r = eng.health.doctor()
    assert _check(r, "vectors:metadata").ids == [ids[3]]
    assert eng.health.doctor(repair=True).ok
    tier = c.execute("SELECT tier FROM memories_vec WHERE memory_id = ?", (ids[3],)).fetchone()[0]
    assert tier == "archived"


def test_memories_without_a_model_are_listed_pending_not_failing(db_path, clock):
    with open_engine(db_path, embedder=None, clock=clock) as e:
        mid = e.add_memory("written while no model was loaded")
        r = e.health.doctor()
        assert r.ok and r.pending_vectors == [mid] and r.counts["pending_vectors"] == 1
        r = e.health.doctor(repair=True)  # nothing to embed with: says so, still consistent
        assert r.ok and any("wait for a vector" in a for a in r.repaired)
    with open_engine(db_path, embedder=HashEmbedder(), clock=clock, auto_backfill=False) as e:
        r = e.health.doctor(repair=True)
        assert r.ok and r.pending_vectors == [] and "embedded 1 memories" in r.repaired


@pytest.mark.sqlite_only(
    "tampers with SQLite's FTS5 / vec0 / sqlite_sequence internals; PostgreSQL's own in tests/postgres/test_pg_doctor.py"
)
def test_orphans_are_reported(filled):
    eng, ids = filled
    c = direct(eng.store)
    c.execute("PRAGMA foreign_keys = OFF")
    c.execute("INSERT INTO messages(session_id, content) VALUES ('no-such-session', 'lost')")
    c.execute("UPDATE memories SET absorbed_into = 424242 WHERE id = ?", (ids[4],))
    c.execute("INSERT INTO rule_history(rule_id, at, new_score) VALUES (777, 0, 5)")
    r = eng.health.doctor()
    assert {"orphans:messages", "orphans:absorbed_into", "orphans:rule_history"} <= _failing(r)
    assert _check(r, "orphans:absorbed_into").ids == [ids[4]]
    # orphans are records, not derived data: repair does not delete them
    assert not eng.health.doctor(repair=True).ok


def test_audit_edit_is_reported_as_a_break(filled):
    eng, ids = filled
    c = direct(eng.store)
    victim = c.execute(
        "SELECT id FROM audit WHERE target_id = ? AND action = 'add'", (str(ids[2]),)
    ).fetchone()[0]
    assert eng.health.doctor().ok
    c.execute("UPDATE audit SET actor = 'someone-else' WHERE id = ?", (victim,))
    r = eng.health.doctor()
    chain = _check(r, "audit-chain")
    assert not chain.ok and chain.ids == [victim] and "does not match its hash" in chain.detail
    assert not eng.health.doctor(repair=True).ok  # evidence is never "repaired"


def test_audit_row_deleted_breaks_the_link_of_the_next(filled):
    eng, _ = filled
    c = direct(eng.store)
    ids = [r[0] for r in c.execute("SELECT id FROM audit ORDER BY id")]
    c.execute("DELETE FROM audit WHERE id = ?", (ids[3],))
    chain = _check(eng.health.doctor(), "audit-chain")
    assert not chain.ok and chain.ids == [ids[4]] and "link does not match" in chain.detail


def test_audit_rehashed_edit_still_breaks_the_chain(filled):
    """An intruder who recomputes the edited row's hash still breaks the next row's link."""
    from engine.audit import log as audit

    eng, _ = filled
    c = direct(eng.store)
    r = c.execute("SELECT * FROM audit ORDER BY id LIMIT 1 OFFSET 2").fetchone()
    h = audit.row_hash(
        r["prev_hash"],
        r["at"],
        r["actor"],
        "forged",
        r["target_kind"],
        r["target_id"],
        r["reason"],
        r["summary"],
    )
    c.execute("UPDATE audit SET action = 'forged', hash = ? WHERE id = ?", (h, r["id"]))
    chain = _check(eng.health.doctor(), "audit-chain")
    # keyed chain (issue 12): the re-hashed row itself no longer verifies, and the next link breaks
    assert not chain.ok and chain.ids == [r["id"], r["id"] + 1]


def test_repair_is_audited_and_keeps_the_chain(filled):
    eng, _ = filled
    eng.health.doctor(repair=True)
    row = direct(eng.store).one("SELECT action, actor FROM audit ORDER BY id DESC LIMIT 1")
    assert tuple(row) == ("doctor-repair", "tester")
    assert eng.health.doctor().ok


def test_cli_doctor_exit_code_and_json(filled, capsys):
    import json

    eng, ids = filled
    path = str(eng.path)
    assert main(["--db", path, "doctor", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True and doc["counts"]["memories"] == 5
    direct(eng.store).execute("UPDATE audit SET reason = 'tampered' WHERE id = 2")
    assert main(["--db", path, "doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  audit-chain" in out and "problem(s) found" in out


@pytest.mark.sqlite_only(
    "tampers with SQLite's FTS5 / vec0 / sqlite_sequence internals; PostgreSQL's own in tests/postgres/test_pg_doctor.py"
)
def test_forget_leaves_a_healthy_file(filled):
    """Forget removes rows, FTS entries and vectors and re-chains the audit it redacts: the
    doctor must see a consistent file afterwards, not a tamper."""
    eng, ids = filled
    eng.forget.run("memory", [ids[0]], "user asked")
    r = eng.health.doctor()
    assert r.ok, [(c.name, c.detail) for c in r.problems]
    assert r.counts["memories"] == r.counts["memories_fts"] == r.counts["memories_vec"] == 4


@pytest.mark.sqlite_only(
    "tampers with SQLite's FTS5 / vec0 / sqlite_sequence internals; PostgreSQL's own in tests/postgres/test_pg_doctor.py"
)
def test_cli_doctor_repair(filled, capsys, monkeypatch):
    import json

    import engine.embed

    monkeypatch.setattr(engine.embed, "MiniLMEmbedder", lambda *a, **k: HashEmbedder())
    eng, ids = filled
    direct(eng.store).execute("DELETE FROM memories_vec WHERE memory_id = ?", (ids[0],))
    direct(eng.store).execute("DELETE FROM messages_fts_docsize")  # an index gone bad
    path = str(eng.path)
    assert main(["--db", path, "doctor"]) == 1
    capsys.readouterr()
    assert main(["--db", path, "doctor", "--repair", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] and "rebuilt full-text indexes" in doc["repaired"]
    assert "embedded 1 memories" in doc["repaired"]


@pytest.mark.sqlite_only(
    "tampers with SQLite's FTS5 / vec0 / sqlite_sequence internals; PostgreSQL's own in tests/postgres/test_pg_doctor.py"
)
def test_a_refused_audit_anchor_move_is_a_finding(eng):
    """An after-commit hook that failed (here the audit anchor refusing to move back over a cut
    log) is one finding: the write committed, what should follow it did not."""
    for i in range(6):
        eng.add_memory(f"note {i} about the release calendar", dedup=False)
    direct(eng.store).execute("DELETE FROM audit WHERE id > 3")
    direct(eng.store).execute("UPDATE sqlite_sequence SET seq = 3 WHERE name = 'audit'")
    for i in range(5):
        eng.add_memory(f"later {i} about the release calendar", dedup=False)
    assert any("audit_anchor" in e for e in eng.store.hook_errors)
    r = eng.health.doctor()
    hooks = [c for c in r.checks if c.name == "after-commit"]
    assert not r.ok and hooks and all(not c.ok for c in hooks)
    assert len(hooks) == len(set(eng.store.hook_errors)) and "audit_anchor" in hooks[0].detail


def test_a_forget_case_whose_audit_head_was_cut_is_a_finding(eng):
    eng.add_memory("The vault code is Quokka-7731-Delta, tell no one", dedup=False)
    res = eng.forget.run("query", "Quokka-7731-Delta", "asked to")
    assert _check(eng.health.doctor(), "forget-heads").ok
    head = eng.forget.get(res.request_id).counts["audit_head"]
    eng.store.write(lambda c: direct(c).execute("DELETE FROM audit WHERE id >= ?", (head[0],)))
    found = [c for c in eng.health.doctor().checks if c.name == "forget-heads"]
    assert len(found) == 1 and not found[0].ok
    assert f"forget case {res.request_id}" in found[0].detail and "gone" in found[0].detail
