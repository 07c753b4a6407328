"""The audited write's statements on PostgreSQL (issue #24): the partition's lock and its newest
row in one statement, and the anchor's read folded into the one under its lock (none after a
write that appended no audit row) — without weakening the chain: a head read one behind (a
holder committing between the statement's snapshot and its lock) never forks it."""

from __future__ import annotations

import psycopg

from engine import FixedClock, HashEmbedder, open_engine
from engine.audit import log as audit
from engine.audit.hashing import hasher
from engine.storage.postgres import audit as pg_audit
from engine.storage.postgres.connection import PgConnection

T0 = "2026-01-01T00:00:00Z"
PICK = "FOR UPDATE SKIP LOCKED"
LAST_ALONE = "SELECT * FROM audit WHERE part = %s ORDER BY seq DESC LIMIT 1"
ANCHOR = ("inet_server_addr()", "WITH RECURSIVE p(part)")  # the view; the partitions' heads


def _open(url: str):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="tester", load="now")


def _statements(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = PgConnection.execute

    def execute(self, sql, params=()):
        if isinstance(sql, str):
            seen.append(" ".join(sql.split()))
        return real(self, sql, params)

    monkeypatch.setattr(PgConnection, "execute", execute)
    return seen


def test_an_append_locks_and_reads_its_head_in_one_statement_and_the_anchor_reads_once(pg_db, monkeypatch):
    e = _open(pg_db)
    try:
        e.add_memory("deploys need a change ticket")
        e.add_memory("billing runs on the first of the month")
        seen = _statements(monkeypatch)
        e.add_memory("the api gateway times out after 30 s")
        assert sum(PICK in s for s in seen) == 1, seen
        assert sum(s == LAST_ALONE for s in seen) == 0  # was a statement of its own
        anchor = [s[:70] for s in seen if any(k in s for k in ANCHOR)]
        assert len(anchor) == 1, anchor  # was 2: the view before the lock, the heads under it

        seen.clear()  # a write that appends no audit row: the anchor reads nothing
        e.store.write(lambda c: c.meta.put("probe_key", "1"))
        assert [s for s in seen if any(k in s for k in ANCHOR)] == []
        assert e.store.hook_errors == []
        assert e.audit.verify().ok
    finally:
        e.close()


def test_a_head_read_one_behind_is_caught_by_the_insert_and_never_forks_the_chain(pg_db, monkeypatch):
    """Another holder's append commits after the pick's snapshot but before its lock (forced here:
    appended from another connection right after the pick): the append links to that row."""
    e = _open(pg_db)
    try:
        e.add_memory("deploys need a change ticket")
        real = pg_audit.lock_free_partition_last
        injected: list[str] = []

        def pick_then_someone_appends(conn, partitions, start):
            got = real(conn, partitions, start)
            if got is not None and not injected:
                part, last = got
                hs = hasher()
                prev = last["hash"] if last is not None else "0" * 64
                digest = hs.text_digest("", "between")
                h = hs.chained(prev, 1.0, "other", "probe", "", "", digest)
                with psycopg.connect(pg_db, autocommit=True) as other:
                    other.execute(
                        "INSERT INTO audit(at, actor, action, target_kind, target_id, reason, summary,"
                        " prev_hash, hash, digest, part) VALUES (1.0, 'other', 'probe', '', '', '',"
                        " 'between', %s, %s, %s, %s)",
                        (prev, h, digest, part),
                    )
                injected.append(h)
            return got

        monkeypatch.setattr(pg_audit, "lock_free_partition_last", pick_then_someone_appends)
        rid = e.store.write(lambda c: audit.append(c, at=e.clock.now(), actor="tester", action="probe"))
        assert injected
        row = e.store.conn.execute("SELECT prev_hash FROM audit WHERE id = %s", [rid]).fetchone()
        assert row[0] == injected[0]  # linked to the row committed in between, not the one read
        assert e.audit.verify().ok, e.audit.verify()
        assert e.store.hook_errors == []
    finally:
        e.close()


def test_a_second_append_in_one_write_relocks_and_reads_its_partition_in_one_statement(pg_db, monkeypatch):
    e = _open(pg_db)
    try:
        e.add_memory("deploys need a change ticket")
        seen = _statements(monkeypatch)

        def two(c):
            return [
                audit.append(c, at=e.clock.now(), actor="tester", action="probe", summary=k) for k in (1, 2)
            ]

        first, second = e.store.write(two)
        relock = [s for s in seen if "FOR UPDATE" in s and "audit_heads" in s]
        assert len(relock) == 2, relock  # the pick, then the held partition again: each with its head
        assert sum(s == LAST_ALONE for s in seen) == 0
        rows = e.store.conn.execute(
            "SELECT id, part, prev_hash, hash FROM audit WHERE id = ANY(%s) ORDER BY id", [[first, second]]
        ).fetchall()
        assert rows[0][1] == rows[1][1] and rows[1][2] == rows[0][3]  # one partition, linked
        assert e.audit.verify().ok and e.store.hook_errors == []
    finally:
        e.close()


def test_an_append_after_a_dry_run_inside_the_write_links_to_the_row_that_stayed(pg_db):
    e = _open(pg_db)
    try:
        e.add_memory("deploys need a change ticket")

        def write(c):
            a = audit.append(c, at=e.clock.now(), actor="tester", action="probe", summary="kept")
            e.store.dry_run(lambda d: audit.append(d, at=e.clock.now(), actor="tester", action="probe"))
            return a, audit.append(c, at=e.clock.now(), actor="tester", action="probe", summary="after")

        a, b = e.store.write(write)
        got = dict(e.store.conn.execute("SELECT id, prev_hash FROM audit WHERE id = %s", [b]).fetchall())
        kept = e.store.conn.execute("SELECT hash FROM audit WHERE id = %s", [a]).fetchone()[0]
        assert got[b] == kept  # not the dry run's rolled-back row
        assert e.audit.verify().ok and e.store.hook_errors == []
    finally:
        e.close()
