"""The audit log on PostgreSQL is several hash chains (issue #24, engine/audit/partitions.py):
concurrent audited writes append to different heads instead of queueing on one; `audit --verify`
walks every partition, and the periodic heads records bind them, so a partition deleted or two
partitions swapped (each chain still linked in itself) shows."""

from __future__ import annotations

import threading
import time
import zlib

from console.cli import main
from engine import FixedClock, HashEmbedder, open_engine
from engine.audit import log as audit
from engine.audit import partitions
from engine.storage.postgres import audit as pg_audit
from tests.direct_sql import direct

T0 = "2026-01-01T00:00:00Z"


def _open(url: str, actor: str = "tester"):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor=actor, load="now")


def _actors(n: int) -> list[str]:
    """`n` actor names that hash to `n` different partitions."""
    out: dict[int, str] = {}
    i = 0
    while len(out) < n:
        name = f"agent-{i}"
        out.setdefault(zlib.crc32(name.encode()) % 8, name)  # the default postgres.audit_partitions
        i += 1
    return list(out.values())


def _append(e, actor: str, n: int = 1) -> None:
    for k in range(n):
        e.store.write(
            lambda c, k=k: audit.append(c, at=e.clock.now(), actor=actor, action="probe", summary=k)
        )


def test_an_audited_write_does_not_wait_for_another_holding_its_head(pg_db):
    e = _open(pg_db)
    a, b, first = _actors(3)
    _append(e, first)  # the log's first row (where keying begins) is written once, by one writer
    entered, release = threading.Event(), threading.Event()

    def hold(c):
        audit.append(c, at=e.clock.now(), actor=a, action="probe")
        entered.set()
        assert release.wait(20)

    holder = threading.Thread(target=e.store.write, args=(hold,))
    try:
        holder.start()
        assert entered.wait(10)
        took = []
        for actor in (b, a):  # another agent; and the same agent from another transaction
            t0 = time.monotonic()
            _append(e, actor)
            took.append(time.monotonic() - t0)
        assert holder.is_alive()  # the first transaction is still open...
        assert max(took) < 1.5, f"audited writes waited {took} s for the open one"  # ...and stopped neither
    finally:
        release.set()
        holder.join(20)
    with e.store.reading() as c:
        parts = c.audit_queries.partitions()
    assert len(parts) == 4, parts  # the first, the held one, and one each for the two that did not wait
    chk = e.audit.verify()
    assert chk.ok and chk.rows == 4, chk.problems
    e.close()


def _spread(e, monkeypatch) -> list[int]:
    """Rows from three agents (three partitions), heads records every 4 ids; the partitions."""
    monkeypatch.setattr(partitions, "HEADS_EVERY", 4)
    for _ in range(4):
        for actor in _actors(3):
            _append(e, actor, 2)
    with e.store.reading() as c:
        return c.audit_queries.partitions()


def test_every_partition_verifies_and_heads_records_bind_them(pg_db, monkeypatch):
    e = _open(pg_db)
    parts = _spread(e, monkeypatch)
    assert len(parts) == 3
    heads = direct(e.store).all("SELECT part, summary FROM audit WHERE action = 'audit-heads'")
    assert len(heads) >= 4 and all(len(partitions.bound_heads({"summary": s})) == 3 for _, s in heads[1:])
    chk = e.audit.verify()
    assert chk.ok, chk.problems
    assert main(["--db", pg_db, "audit", "--verify"]) == 0
    # a partition whose rows are all deleted: every other chain is intact, the heads records say so
    newest = direct(e.store).one("SELECT part FROM audit ORDER BY id DESC LIMIT 1")[0]
    gone = next(p for p in parts if p != newest)  # (not the anchored head's: the anchor would see that)
    direct(e.store).execute("DELETE FROM audit WHERE part = ?", (gone,))
    chk = e.audit.verify()
    assert not chk.ok
    assert any(f"partition {gone} position" in p and "missing" in p for p in chk.problems), chk.problems
    assert main(["--db", pg_db, "audit", "--verify"]) != 0
    e.close()


def test_swapped_partitions_are_detected(pg_db, monkeypatch):
    e = _open(pg_db)
    p, q, _ = _spread(e, monkeypatch)
    d = direct(e.store)
    d.execute("UPDATE audit SET part = -1 WHERE part = ?", (p,))
    d.execute("UPDATE audit SET part = ? WHERE part = ?", (p, q))
    d.execute("UPDATE audit SET part = ? WHERE part = -1", (q,))
    chk = e.audit.verify()
    assert not chk.ok
    assert any("not the row the heads record" in x for x in chk.problems), chk.problems
    e.close()


def test_one_partition_is_one_chain(pg_db, monkeypatch):
    e = _open(pg_db)
    monkeypatch.setattr(pg_audit, "PARTITIONS", 1)  # postgres.audit_partitions = 1
    for actor in _actors(3):
        _append(e, actor, 2)
    with e.store.reading() as c:
        assert c.audit_queries.partitions() == [0]
    assert e.audit.verify().ok
    e.close()
