"""Issue 24 "Audit that scales": rows chained over a keyed digest of their text, so a forget redacts
in place (no hash moves, the cost is the rows redacted), a redacted row stays tamper-evident, a quote
outside the forgotten records is swept after the commit, an older chain still verifies and redacts,
and an id gap left by a killed writer is no chain gap while a deleted row still is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from console.cli import main
from engine.audit import log as audit
from engine.audit.hashing import DIGEST_FROM, GENESIS, hasher
from tests.direct_sql import direct
from tests.engine.audit.test_audit_anchor import HANG, ROOT

pytestmark = pytest.mark.backends

SECRET = "The vault passphrase is cobalt-heron-42"


def _add(eng, n: int, word: str = "note") -> list[int]:
    return [eng.add_memory(f"{word} {i} about the release calendar", dedup=False) for i in range(n)]


def _links(eng) -> dict[int, tuple[str, str]]:
    rows = direct(eng.store).execute("SELECT id, prev_hash, hash FROM audit").fetchall()
    return {int(r[0]): (r[1], r[2]) for r in rows}


def test_forget_redacts_in_place_and_moves_no_hash(eng):
    _add(eng, 3)
    secret = eng.add_memory(SECRET, dedup=False)
    _add(eng, 3, "later")
    before = _links(eng)
    eng.forget.run("memory", [secret], "request 24")
    after = _links(eng)
    assert {i: after[i] for i in before} == before  # nothing re-chained (main re-hashed 4 rows on)
    add_row = eng.audit.log(target=f"memory:{secret}", action="add")[0]
    assert "cobalt" not in str(add_row.summary) and "[forgotten]" in str(add_row.summary)
    forget_row = eng.audit.log(action="forget")[0]
    assert add_row.id in forget_row.summary["counts"]["audit_redacted_ids"]  # the redaction recorded
    chk = eng.audit.verify()
    assert chk.ok and chk.redacted_rows == 1 and chk.anchor == "ok", chk.message
    assert "1 redacted by forget" in chk.message


def test_an_edited_redacted_row_and_a_forged_mark_are_detected(eng):
    secret = eng.add_memory(SECRET, dedup=False)
    other = _add(eng, 2)
    eng.forget.run("memory", [secret], "request 24")
    add_id = eng.audit.log(target=f"memory:{secret}", action="add")[0].id
    d = direct(eng.store)
    d.execute("UPDATE audit SET summary = 'something else' WHERE id = ?", (add_id,))
    chk = eng.audit.verify()
    assert not chk.ok and chk.first_bad_id == add_id, chk.problems
    d.execute("UPDATE audit SET summary = '[forgotten]' WHERE id = ?", (add_id,))
    # a writer without the key cannot mark a row redacted either
    victim = eng.audit.log(target=f"memory:{other[1]}", action="add")[0].id
    d.execute("UPDATE audit SET summary = '[forgotten]', redaction = ? WHERE id = ?", ("0" * 64, victim))
    chk = eng.audit.verify()
    assert not chk.ok and f"row {victim}: content does not match its hash" in chk.problems, chk.problems


def test_a_quote_outside_the_forgotten_records_is_swept_after_the_commit(eng):
    secret = eng.add_memory(SECRET, dedup=False)
    eng.audit.refused("delete", reason="asked to drop cobalt-heron-42 from the notes")
    res = eng.forget.run("memory", [secret], "request 24")
    assert res.counts["audit_swept"] == 1
    sweep = eng.audit.log(action="forget-audit-sweep")
    assert len(sweep) == 1 and len(sweep[0].summary["audit_redacted_ids"]) == 1
    texts = direct(eng.store).execute("SELECT reason, summary FROM audit").fetchall()
    assert not [t for t in texts if "cobalt" in f"{t[0]} {t[1]}"]
    chk = eng.audit.verify()
    assert chk.ok and chk.redacted_rows == 2, chk.message


def _as_older_version(eng) -> None:
    """Re-hash the chain as memconsole before issue 24 wrote it (keyed, over the text, no digest)."""
    hs, prev = hasher(), GENESIS
    d = direct(eng.store)
    for r in d.execute("SELECT * FROM audit ORDER BY id").fetchall():
        h = hs.keyed(
            prev,
            r["at"],
            r["actor"],
            r["action"],
            r["target_kind"],
            r["target_id"],
            r["reason"],
            r["summary"],
        )
        d.execute("UPDATE audit SET prev_hash = ?, hash = ?, digest = NULL WHERE id = ?", (prev, h, r["id"]))
        prev = h
    d.execute("DELETE FROM meta WHERE key = ?", (DIGEST_FROM,))


def test_an_older_keyed_chain_verifies_extends_and_redacts(eng):
    secret = eng.add_memory(SECRET, dedup=False)
    _add(eng, 2)
    _as_older_version(eng)
    chk = eng.audit.verify()
    assert chk.ok and chk.keyed, chk.problems  # the anchor follows its row (same identity, keyed)
    first_new = _add(eng, 2, "new")[0]
    first_digest = eng.audit.log(target=f"memory:{first_new}", action="add")[0].id
    with eng.store.reading() as c:
        assert int(c.audit_queries.meta_value(DIGEST_FROM)) == first_digest  # where the new format began
    assert eng.audit.verify().ok
    eng.forget.run("memory", [secret], "request 24")  # an older row: re-chained as before
    chk = eng.audit.verify()
    assert chk.ok, chk.problems
    assert "cobalt" not in str(eng.audit.log(target=f"memory:{secret}", action="add")[0].summary)


def test_a_killed_writer_leaves_no_chain_gap_but_a_deleted_row_still_shows(eng, db_path, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    _add(eng, 2)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    doomed = subprocess.Popen(
        [sys.executable, "-c", HANG, str(db_path)], cwd=ROOT, env=env, stdout=subprocess.PIPE
    )
    assert doomed.stdout is not None and doomed.stdout.readline().strip() == b"in-write"
    os.kill(doomed.pid, signal.SIGKILL)  # it held an appended row (and, on PostgreSQL, an id)
    doomed.wait(timeout=60)

    def append_then_fail(c):  # a rolled-back transaction that took an id too
        audit.append(c, at=eng.clock.now(), actor="agent", action="probe")
        raise RuntimeError("the writer dies before commit")

    with pytest.raises(RuntimeError):
        eng.store.write(append_then_fail)
    _add(eng, 2)
    assert main(["--db", str(db_path), "audit", "--verify"]) == 0
    chk = eng.audit.verify()
    assert chk.ok and chk.rows == 4, chk.problems
    third = sorted(_links(eng))[2]
    direct(eng.store).execute("DELETE FROM audit WHERE id = ?", (third,))
    chk = eng.audit.verify()
    assert not chk.ok and any("missing: deleted" in p for p in chk.problems), chk.problems
