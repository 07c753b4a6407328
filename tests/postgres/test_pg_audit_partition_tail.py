"""A partition's tail cut back after its last heads record (issue #24, engine/audit/anchor_heads.py):
each chain is still linked in itself and the log's newest row (another partition's) is where the
anchor left it, so only the anchor's record of every partition's head can show it. `audit --verify`
fails naming the partition, and the anchor stays as evidence (a later write does not move it)."""

from __future__ import annotations

import json

from console.cli import main
from engine.audit.anchor import read_anchor
from tests.direct_sql import direct
from tests.postgres.test_pg_audit_partitions import _actors, _append, _open


def _cut_setup(pg_db: str):
    e = _open(pg_db)
    for actor in _actors(3):
        _append(e, actor, 3)  # 9 rows in 3 partitions; no heads record (one every 256 ids)
    d = direct(e.store)
    newest = d.one("SELECT part FROM audit ORDER BY id DESC LIMIT 1")[0]
    victim = next(p for (p,) in d.all("SELECT DISTINCT part FROM audit ORDER BY part") if p != newest)
    assert not d.all("SELECT 1 FROM audit WHERE action = 'audit-heads'")
    assert e.audit.verify().ok
    return e, d, victim


def test_a_partition_tail_cut_after_its_last_heads_record_fails_verify(pg_db, capsys):
    e, d, victim = _cut_setup(pg_db)
    top = d.one("SELECT max(seq) FROM audit WHERE part = ?", (victim,))[0]
    d.execute("DELETE FROM audit WHERE part = ? AND seq = ?", (victim, top))  # its newest row
    chk = e.audit.verify()
    assert not chk.ok
    assert chk.anchor == "truncated", (chk.anchor, chk.anchor_detail)
    assert any(f"partition {victim} was cut back" in p and f"position {top}" in p for p in chk.problems), (
        chk.problems
    )
    capsys.readouterr()
    assert main(["--db", pg_db, "audit", "--verify", "--json"]) != 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["ok"] is False and f"partition {victim} was cut back" in json.dumps(verdict)
    # a write after the cut never re-anchors the shorter partition: the evidence stays
    with e.store.reading() as c:
        before = read_anchor(c)[1]
    _append(e, "someone-else")
    with e.store.reading() as c:
        after = read_anchor(c)[1]
    assert before is not None and after is not None
    assert after["heads"][str(victim)][0] == top and after["last_id"] == before["last_id"]
    assert any("cut back" in x for x in e.store.hook_errors), e.store.hook_errors
    assert not e.audit.verify().ok
    e.close()


def test_a_partition_cut_and_written_again_is_not_the_anchored_row(pg_db):
    e, d, victim = _cut_setup(pg_db)
    top = d.one("SELECT max(seq) FROM audit WHERE part = ?", (victim,))[0]
    d.execute("DELETE FROM audit WHERE part = ? AND seq = ?", (victim, top))
    # someone re-appends at that position, linked to the row before it (no key: a plain hash)
    prev = d.one("SELECT hash FROM audit WHERE part = ? AND seq = ?", (victim, top - 1))[0]
    d.execute(
        "INSERT INTO audit(at, actor, action, target_kind, target_id, reason, summary, prev_hash, hash,"
        " part, seq) VALUES (0, 'x', 'probe', '', '', '', '', ?, 'forged', ?, ?)",
        (prev, victim, top),
    )
    chk = e.audit.verify()
    assert not chk.ok
    assert any(f"partition {victim} position {top} is not the row anchored" in p for p in chk.problems), (
        chk.problems
    )
    e.close()


def test_concurrent_partitions_keep_verifying_and_the_anchor_holds_each_head(pg_db):
    e, d, _ = _cut_setup(pg_db)
    for actor in _actors(3):
        _append(e, actor, 2)
    with e.store.reading() as c:
        rec = read_anchor(c)[1]
    assert rec is not None
    want = {str(p): s for p, s in d.all("SELECT part, max(seq) FROM audit GROUP BY part")}
    assert {p: v[0] for p, v in rec["heads"].items()} == want
    assert e.audit.verify().ok
    assert not e.store.hook_errors
    e.close()
