"""Issue 12 "Trust", audit part: the chain detects what it claims to. Keyed with the installation's
key (a plain-sha256 re-hash of an edit no longer verifies), its head anchored outside the database
(a truncated tail shows), legacy chains upgraded without laundering a break, forget's redaction
still intact, and concurrent writers leave the anchor at the true head."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from console.cli import main
from engine import HashEmbedder, open_engine
from engine.audit import log as audit
from engine.audit.anchor import anchors_dir, database_id, read_anchor
from engine.audit.hashing import GENESIS, row_hash
from engine.storage.sqlite.store import connect
from tests.direct_sql import direct

pytestmark = pytest.mark.backends

ROOT = Path(__file__).resolve().parents[3]


def _add(eng, n: int, word: str = "note") -> list[int]:
    return [eng.add_memory(f"{word} {i} about the release calendar", dedup=False) for i in range(n)]


def _plain_rechain(conn, edit: dict[int, str] | None = None) -> None:
    """What an attacker with only database write access could always do: change rows and re-hash
    the whole chain with the (public) unkeyed scheme."""
    prev = GENESIS
    for r in conn.execute("SELECT * FROM audit ORDER BY id").fetchall():
        reason = (edit or {}).get(r["id"], r["reason"])
        h = row_hash(
            prev, r["at"], r["actor"], r["action"], r["target_kind"], r["target_id"], reason, r["summary"]
        )
        conn.execute(
            "UPDATE audit SET reason = ?, prev_hash = ?, hash = ? WHERE id = ?", (reason, prev, h, r["id"])
        )
        prev = h


def test_an_edit_rehashed_with_plain_sha256_is_detected(eng):
    _add(eng, 4)
    assert eng.audit.verify().ok
    _plain_rechain(direct(eng.store), {2: "nothing to see here"})
    chk = eng.audit.verify()
    assert not chk.ok and chk.first_bad_id == 1, chk.message  # no row verifies under the key
    assert any("re-hashed without the key" in p for p in chk.problems)
    assert chk.anchor == "replaced"  # the anchored head's hash is gone too
    _add(eng, 1)  # a later write does not "upgrade" the forgery
    assert not eng.audit.verify().ok


def test_a_plain_rehash_is_not_laundered_even_without_the_anchor(eng):
    _add(eng, 3)
    with eng.store.reading() as c:
        (anchors_dir() / f"{database_id(c)}.json").unlink()
    _plain_rechain(direct(eng.store), {2: "nothing to see here"})
    assert "not re-keyed" in eng.audit.rekey()
    _add(eng, 1)
    chk = eng.audit.verify()
    assert not chk.ok and chk.first_bad_id == 1, chk.message


def test_deleting_the_last_rows_is_reported_as_truncation(eng):
    _add(eng, 6)
    conn = direct(eng.store)
    conn.execute("DELETE FROM audit WHERE id > 4")
    chk = eng.audit.verify()
    assert not chk.ok and chk.anchor == "truncated" and chk.truncated_after == 4
    assert "the audit log was truncated after row 4 (anchored at row 6" in chk.message


@pytest.mark.sqlite_only(
    "rewrites SQLite's own rows (sqlite_sequence, INSERT OR REPLACE, a second sqlite3 connection on the file)"
)
def test_truncate_then_refill_keeps_the_anchor_as_evidence(eng):
    _add(eng, 6)
    conn = direct(eng.store)
    conn.execute("DELETE FROM audit WHERE id > 3")
    conn.execute("UPDATE sqlite_sequence SET seq = 3 WHERE name = 'audit'")  # hide the ids, too
    _add(eng, 5, "later")  # legitimate writes reach (and pass) the old head
    chk = eng.audit.verify()
    assert not chk.ok and chk.anchor in ("replaced", "truncated"), chk.message
    assert any(p.startswith("anchor:") and "records row 6" in p for p in chk.problems), chk.problems
    assert any("audit_anchor" in e for e in eng.store.hook_errors)  # the anchor never moved


def test_deleting_a_middle_row_and_relinking_is_detected(eng):
    _add(eng, 5)
    conn = direct(eng.store)
    conn.execute("DELETE FROM audit WHERE id = 3")
    _plain_rechain(conn)
    chk = eng.audit.verify()
    assert not chk.ok
    # SQLite names the id; PostgreSQL the chain position (its ids may have gaps: issue 22)
    gone = ("row 3 is missing", "position 3 is missing")
    assert any(p.startswith("row 4: link") and any(g in p for g in gone) for p in chk.problems), chk.problems


def test_forget_redaction_stays_intact_and_the_anchor_follows(eng):
    ids = _add(eng, 3)
    secret = eng.add_memory("The vault passphrase is cobalt-heron-42", dedup=False)
    eng.forget.run("memory", [secret], "request 12")
    chk = eng.audit.verify()
    assert chk.ok and chk.keyed and chk.anchor == "ok", chk.message
    with eng.store.reading() as c:
        head = audit.head(c)
        _, rec = read_anchor(c)
        assert "cobalt" not in json.dumps([tuple(r) for r in direct(c).execute("SELECT * FROM audit")])
    assert (rec["last_id"], rec["last_hash"]) == head and head[0] > len(ids)
    assert eng.store.hook_errors == []


def test_forget_never_launders_an_earlier_edit(eng):
    secret = eng.add_memory("The vault passphrase is cobalt-heron-42", dedup=False)
    _add(eng, 3)
    direct(eng.store).execute("UPDATE audit SET reason = 'tampered' WHERE id = 3")
    eng.forget.run("memory", [secret], "request 12")  # re-chains from row 1 (the add preview)
    chk = eng.audit.verify()
    assert not chk.ok and chk.first_bad_id == 3, chk.problems


def test_a_missing_anchor_says_it_cannot_rule_out_truncation(eng):
    _add(eng, 2)
    with eng.store.reading() as c:
        dbid = database_id(c)
    (anchors_dir() / f"{dbid}.json").unlink()
    chk = eng.audit.verify()
    assert chk.ok and chk.anchor == "missing"
    assert "a truncated tail cannot be ruled out" in chk.message
    _add(eng, 1)  # the next write anchors the head again
    assert eng.audit.verify().anchor == "ok"


def test_anchor_file_is_private_and_head_is_empty_safe(eng):
    with eng.store.reading() as c:
        assert audit.head(c) == (0, GENESIS)
    _add(eng, 1)
    with eng.store.reading() as c:
        dbid = database_id(c)
    st = os.stat(anchors_dir() / f"{dbid}.json")
    assert st.st_mode & 0o777 == 0o600 and os.stat(anchors_dir()).st_mode & 0o077 == 0


WRITER = """
import sys
from engine import HashEmbedder, open_engine
eng = open_engine(sys.argv[1], embedder=HashEmbedder(), actor="w" + sys.argv[2])
for i in range(int(sys.argv[3])):
    eng.add_memory(f"writer {sys.argv[2]} note {i} about the deploy window", dedup=False)
assert eng.store.hook_errors == [], eng.store.hook_errors
eng.close()
"""


def test_two_processes_appending_leave_the_anchor_at_the_true_head(tmp_path):
    db = tmp_path / "shared.db"
    open_engine(db, embedder=HashEmbedder()).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), str(w), "40"], cwd=ROOT, stderr=subprocess.PIPE
        )
        for w in range(2)
    ]
    for p in procs:
        assert p.wait(timeout=240) == 0, p.stderr.read().decode()[-2000:]
    eng = open_engine(db, embedder=HashEmbedder())
    try:
        chk = eng.audit.verify()
        with eng.store.reading() as c:
            head = audit.head(c)
            _, rec = read_anchor(c)
        assert chk.ok and chk.rows == 80 and chk.anchor == "ok", chk.message
        assert (rec["last_id"], rec["last_hash"]) == head and rec["rows"] == 80
    finally:
        eng.close()


def _legacy_db(path, rows: int, *, break_at: int | None = None) -> None:
    """A database as an older memconsole left it: audit rows chained with plain sha256, no anchor."""
    open_engine(path, embedder=HashEmbedder()).close()
    conn = connect(path)
    prev = GENESIS
    for i in range(1, rows + 1):
        args = (1.7e9 + i, "old", "add", "memory", str(i), "", f'{{"n":{i}}}')
        h = row_hash(prev, *args)
        conn.execute(
            "INSERT INTO audit(at, actor, action, target_kind, target_id, reason, summary,"
            " prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?)",
            (*args, prev, h),
        )
        prev = h
    if break_at:
        conn.execute("UPDATE audit SET reason = 'edited' WHERE id = ?", (break_at,))
    conn.close()


@pytest.mark.sqlite_only(
    "rewrites SQLite's own rows (sqlite_sequence, INSERT OR REPLACE, a second sqlite3 connection on the file)"
)
def test_a_legacy_plain_chain_upgrades_to_keyed_and_verifies(db_path):
    _legacy_db(db_path, 5)
    eng = open_engine(db_path, embedder=HashEmbedder())
    try:
        chk = eng.audit.verify()
        assert chk.ok and not chk.keyed and chk.legacy_rows == 5, chk.message
        eng.add_memory("first write after the upgrade", dedup=False)
        chk = eng.audit.verify()
        assert chk.ok and chk.keyed and chk.legacy_rows == 0 and chk.rows == 7, chk.message
        assert [e.action for e in eng.audit.log(limit=2)] == ["add", "audit-rekey"]
        _plain_rechain(direct(eng.store))  # and the old attack no longer works on it
        assert not eng.audit.verify().ok
    finally:
        eng.close()


@pytest.mark.sqlite_only(
    "rewrites SQLite's own rows (sqlite_sequence, INSERT OR REPLACE, a second sqlite3 connection on the file)"
)
def test_a_broken_legacy_chain_is_kept_as_found_not_laundered(db_path):
    _legacy_db(db_path, 5, break_at=3)
    eng = open_engine(db_path, embedder=HashEmbedder())
    try:
        assert eng.audit.verify().first_bad_id == 3
        assert "already broken" in eng.audit.rekey()
        eng.add_memory("a write after the upgrade", dedup=False)
        chk = eng.audit.verify()
        assert not chk.ok and chk.first_bad_id == 3 and chk.keyed, chk.problems
        rekey = eng.audit.log(action="audit-rekey")[0]
        assert rekey.summary["first_bad_id"] == 3 and rekey.summary["kept_unkeyed_through"] == 5
    finally:
        eng.close()


def test_cli_verify_reports_truncation_with_exit_1(db_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    eng = open_engine(db_path, embedder=HashEmbedder())
    _add(eng, 4)
    direct(eng.store).execute("DELETE FROM audit WHERE id > 2")
    eng.close()
    assert main(["--db", str(db_path), "audit", "--verify"]) == 1
    out = capsys.readouterr().out
    assert "the audit log was truncated after row 2 (anchored at row 4" in out
    assert main(["--db", str(db_path), "audit", "--verify", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["truncated_after"] == 2


@pytest.mark.sqlite_only(
    "rewrites SQLite's own rows (sqlite_sequence, INSERT OR REPLACE, a second sqlite3 connection on the file)"
)
@pytest.mark.parametrize("bad", ["../../escape", "x" * 200])
def test_a_hostile_database_id_never_names_a_path(eng, bad):
    direct(eng.store).execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('database_id', ?)", (bad,))
    with eng.store.reading() as c:
        dbid = database_id(c)
    assert dbid.startswith("id-") and "/" not in dbid


@pytest.mark.sqlite_only(
    "rewrites SQLite's own rows (sqlite_sequence, INSERT OR REPLACE, a second sqlite3 connection on the file)"
)
def test_a_changed_database_id_is_named_when_its_anchor_goes_missing(eng):
    # Was: reported as a "missing" anchor with the chain still "intact" (issue 22: the id row is
    # the writer's data); now the place record names the old anchor and the check fails.
    _add(eng, 3)
    with eng.store.reading() as c:
        old = database_id(c)
    direct(eng.store).execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('database_id', 'forged0id')")
    chk = eng.audit.verify()
    assert not chk.ok and chk.anchor == "identity-changed", chk.message
    assert "identity changed" in chk.message
    assert f"anchored as database {old}" in chk.problems[0] and "now says forged0id" in chk.problems[0]
