"""Issue 22 "Audit anchored where a database writer cannot reach": someone who can write only the
database must not be able to rewrite audit history while `audit --verify` and `doctor` say
"intact". Each attack below is reported, an ordinary write afterwards never launders it, and
doctor agrees with verify every time. Also: a missing key is refused in one line (never made
anew for an existing installation), a replaced key says "keyed elsewhere" once, and an id gap
left by a rolled-back or killed writer is no gap in the chain."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from console.cli import main
from engine import EngineError, HashEmbedder, keys, open_engine
from engine.audit import log as audit
from engine.audit.anchor import anchors_dir, database_id
from engine.audit.hashing import GENESIS, KEYED_FROM, row_hash
from tests.direct_sql import direct

pytestmark = pytest.mark.backends

ROOT = Path(__file__).resolve().parents[3]


def _add(eng, n: int, word: str = "note") -> list[int]:
    return [eng.add_memory(f"{word} {i} about the release calendar", dedup=False) for i in range(n)]


def _plain_rechain(conn) -> None:
    """Re-hash every row with the public unkeyed scheme (no key needed)."""
    prev = GENESIS
    for r in conn.execute("SELECT * FROM audit ORDER BY id").fetchall():
        h = row_hash(
            prev,
            r["at"],
            r["actor"],
            r["action"],
            r["target_kind"],
            r["target_id"],
            r["reason"],
            r["summary"],
        )
        conn.execute("UPDATE audit SET prev_hash = ?, hash = ? WHERE id = ?", (prev, h, r["id"]))
        prev = h


def _checked(eng):
    """verify, with doctor's audit-chain check asserted to agree with it."""
    chk = eng.audit.verify()
    doc = next(c for c in eng.health.doctor().checks if c.name == "audit-chain")
    assert doc.ok == chk.ok, (doc.detail, chk.message)
    return chk


def _dbid(eng) -> str:
    with eng.store.reading() as c:
        return database_id(c)


def test_a_plain_rehash_with_the_marker_deleted_is_reported_and_never_laundered(eng):
    _add(eng, 4)
    conn = direct(eng.store)
    _plain_rechain(conn)
    conn.execute("DELETE FROM meta WHERE key = ?", (KEYED_FROM,))
    chk = _checked(eng)
    assert not chk.ok and any("re-hashed without the key" in p for p in chk.problems), chk.problems
    _add(eng, 1)  # an ordinary write: no upgrade, no anchor advance
    chk = _checked(eng)
    assert not chk.ok and chk.first_bad_id == 1, chk.message
    assert any("re-hashed without the key" in p for p in chk.problems), chk.problems
    assert any("keyed_from" in p for p in chk.problems), chk.problems
    assert [e.action for e in eng.audit.log(action="audit-rekey")] == []


def test_a_new_database_id_is_reported_as_a_changed_identity_naming_the_old_anchor(eng):
    _add(eng, 3)
    old = _dbid(eng)
    conn = direct(eng.store)
    _plain_rechain(conn)  # and the chain re-hashed, the marker gone: an "older version's" log
    conn.execute("DELETE FROM meta WHERE key = ?", (KEYED_FROM,))
    conn.execute("UPDATE meta SET value = 'forged0id' WHERE key = 'database_id'")
    for _ in range(2):
        chk = _checked(eng)
        assert not chk.ok and chk.anchor == "identity-changed", chk.message
        assert chk.message == (
            f"audit chain not trusted: this database's identity changed from {old} to forged0id"
        )
        lead = chk.problems[0]  # the place, and the old anchor named
        assert f"anchored as database {old}" in lead and "now says forged0id" in lead
        assert str(anchors_dir() / f"{old}.json") in lead
        assert any("re-hashed without the key" in p for p in chk.problems), chk.problems
        _add(eng, 1)  # an ordinary write neither re-keys the forgery nor anchors the new id
    assert not (anchors_dir() / "forged0id.json").exists()
    assert any("identity changed" in e for e in eng.store.hook_errors), eng.store.hook_errors


def test_a_deleted_keyed_from_marker_is_reported(eng):
    _add(eng, 3)
    direct(eng.store).execute("DELETE FROM meta WHERE key = ?", (KEYED_FROM,))
    for _ in range(2):
        chk = _checked(eng)
        assert not chk.ok, chk.message
        assert "the audit_keyed_from row is missing" in chk.message and "keyed from row 1" in chk.message
        _add(eng, 1)


def test_a_truncated_tail_and_a_reset_sequence_are_reported(eng, backend):
    _add(eng, 6)
    conn = direct(eng.store)
    conn.execute("DELETE FROM audit WHERE id > 3")
    if backend == "postgres":
        conn.execute("SELECT setval(pg_get_serial_sequence('audit', 'id'), 3)").fetchall()
    else:
        conn.execute("UPDATE sqlite_sequence SET seq = 3 WHERE name = 'audit'")
    chk = _checked(eng)
    assert not chk.ok and chk.anchor == "truncated", chk.message
    _add(eng, 5, "later")  # ordinary writes reach and pass the anchored row again
    chk = _checked(eng)
    assert not chk.ok and chk.anchor == "replaced", chk.message
    assert any(p.startswith("anchor:") and "records row 6" in p for p in chk.problems), chk.problems


# -- the installation key ------------------------------------------------------------------------


@pytest.fixture
def own_state(tmp_path, monkeypatch):
    """A state dir (key, anchors) of the test's own, so removing its key touches no other test."""
    state = tmp_path / "state"
    monkeypatch.setenv("MEMCONSOLE_STATE", str(state))
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    yield state
    keys.forget_cached()


def _lose_key(state: Path) -> Path:
    path = state / "secret.key"
    path.unlink()
    keys.forget_cached()
    return path


def test_a_missing_key_is_refused_in_one_line_and_never_regenerated(db_path, own_state, capsys):
    eng = open_engine(db_path, embedder=HashEmbedder())
    _add(eng, 2)
    eng.close()
    path = _lose_key(own_state)
    with pytest.raises(EngineError) as err:
        open_engine(db_path, embedder=HashEmbedder())
    msg = str(err.value)
    assert msg == (
        f"the memconsole key {path} is missing; restore it from your backup of {own_state} — it is "
        "never regenerated for an existing installation"
    )
    assert not path.exists()
    assert main(["--db", str(db_path), "audit", "--verify"]) == 2
    out = capsys.readouterr()
    assert out.err.strip() == f"memconsole: {msg}" and out.out == ""
    assert not path.exists()


def test_a_keyed_database_refuses_a_new_key_even_in_an_empty_state_dir(db_path, own_state):
    eng = open_engine(db_path, embedder=HashEmbedder())
    _add(eng, 2)
    eng.close()
    path = _lose_key(own_state)
    shutil.rmtree(anchors_dir())  # the whole state dir gone: the database's keyed chain still says so
    with pytest.raises(EngineError, match="is missing; restore it from your backup"):
        open_engine(db_path, embedder=HashEmbedder())
    assert not path.exists()


def test_a_replaced_key_says_keyed_elsewhere_once(db_path, own_state):
    eng = open_engine(db_path, embedder=HashEmbedder())
    _add(eng, 4)
    eng.close()
    path = own_state / "secret.key"
    path.write_bytes(os.urandom(keys.KEY_BYTES))
    keys.forget_cached()
    eng = open_engine(db_path, embedder=HashEmbedder())
    try:
        for _ in range(2):
            chk = _checked(eng)
            assert not chk.ok and chk.anchor == "keyed-elsewhere", chk.message
            assert "keyed elsewhere (with another installation key)" in chk.message
            assert not any("content does not match" in p for p in chk.problems), chk.problems
            rows = [p for p in chk.problems if p.startswith("row")]
            assert len(rows) == 1 and "keyed elsewhere" in rows[0], chk.problems
            _add(eng, 1)  # a write under the new key does not re-anchor the old chain
    finally:
        eng.close()


# -- id gaps that are no chain gaps ----------------------------------------------------------------


def test_an_id_gap_from_a_rolled_back_write_is_not_a_deleted_row(eng):
    _add(eng, 2)
    _rolled_back_append(eng)
    _add(eng, 2)
    chk = _checked(eng)
    assert chk.ok and chk.rows == 4 and chk.anchor == "ok", chk.problems
    eng.forget.run("memory", [1], "request 22")  # forget's re-link walks positions too
    chk = _checked(eng)
    assert chk.ok, chk.problems


HANG = """
import sys, time
from engine import HashEmbedder, open_engine
from engine.audit import log as audit
eng = open_engine(sys.argv[1], embedder=HashEmbedder(), actor="doomed")
def hang(c):
    audit.append(c, at=time.time(), actor="doomed", action="probe")
    print("in-write", flush=True)
    time.sleep(600)
eng.store.write(hang)
"""

WRITER = """
import sys
from engine import HashEmbedder, open_engine
eng = open_engine(sys.argv[1], embedder=HashEmbedder(), actor="w" + sys.argv[2])
for i in range(int(sys.argv[3])):
    eng.add_memory(f"writer {sys.argv[2]} note {i} about the deploy window", dedup=False)
assert eng.store.hook_errors == [], eng.store.hook_errors
eng.close()
"""


def test_agents_killed_mid_write_leave_an_intact_chain(eng, db_path, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    _add(eng, 1)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(2):  # two killed writers, each holding an appended row when it dies
        doomed = subprocess.Popen(
            [sys.executable, "-c", HANG, str(db_path)], cwd=ROOT, env=env, stdout=subprocess.PIPE
        )
        assert doomed.stdout is not None and doomed.stdout.readline().strip() == b"in-write"
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.wait(timeout=60)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db_path), str(w), "10"],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
        )
        for w in range(2)
    ]
    for p in writers:
        assert p.wait(timeout=240) == 0, p.stderr.read().decode()[-2000:] if p.stderr else ""
    chk = _checked(eng)
    assert chk.ok and chk.rows == 21 and chk.anchor in ("ok", "behind"), chk.problems
    assert main(["--db", str(db_path), "audit", "--verify"]) == 0


def _rolled_back_append(eng) -> None:
    def append_then_fail(c):
        audit.append(c, at=eng.clock.now(), actor="agent", action="probe")
        raise RuntimeError("the writer dies before commit")

    with pytest.raises(RuntimeError):
        eng.store.write(append_then_fail)


def test_an_older_postgres_database_gets_its_chain_positions(db_path, backend, clock):
    if backend != "postgres":
        pytest.skip("the chain's position column is PostgreSQL's (SQLite's ids have no gaps)")
    eng = open_engine(db_path, embedder=HashEmbedder(), clock=clock)
    _add(eng, 2)
    _rolled_back_append(eng)
    _add(eng, 2)
    conn = direct(eng.store)
    conn.execute("DROP TRIGGER audit_position ON audit")  # as a version before issue 22 left it
    conn.execute("ALTER TABLE audit DROP COLUMN seq")
    conn.execute("UPDATE meta SET value = 'older' WHERE key = 'pg_schema'")
    eng.close()
    eng = open_engine(db_path, embedder=HashEmbedder(), clock=clock)  # reconciles: adds, backfills
    try:
        assert [r[0] for r in direct(eng.store).execute("SELECT seq FROM audit ORDER BY id").fetchall()] == [
            1,
            2,
            3,
            4,
        ]
        _add(eng, 1)
        chk = _checked(eng)
        assert chk.ok and chk.rows == 5, chk.problems
    finally:
        eng.close()


def test_a_version_1_anchor_is_sealed_with_its_keyed_from_on_the_next_write(eng):
    _add(eng, 2)
    path = anchors_dir() / f"{_dbid(eng)}.json"
    rec = json.loads(path.read_text())
    for k in ("mac", "keyed_from", "place", "instance"):
        rec.pop(k)
    path.write_text(json.dumps({**rec, "version": 1}))  # as an installation before issue 22 left it
    assert _checked(eng).ok
    _add(eng, 1)
    rec = json.loads(path.read_text())
    assert rec["version"] == 2 and rec["keyed_from"] == 1 and rec["mac"] and rec["last_id"] == 3
    path.write_text(json.dumps({**rec, "keyed_from": None}))  # a seal does not survive an edit
    chk = _checked(eng)
    assert not chk.ok and chk.anchor == "keyed-elsewhere", chk.message


def test_two_edited_rows_amid_keyed_ones_are_edits_not_another_key(eng):
    _add(eng, 5)
    direct(eng.store).execute("UPDATE audit SET reason = 'tampered' WHERE id IN (3, 4)")
    chk = _checked(eng)
    assert not chk.ok and chk.first_bad_id == 3, chk.problems
    assert [p for p in chk.problems if p.startswith("row")] == [
        "row 3: content does not match its hash",
        "row 4: content does not match its hash",
    ]
