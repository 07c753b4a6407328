"""`PgReplica.wait_for` cannot hang on a WAL position no record ends at (issue #24).

The cause of the fixture's timeout: `pg_current_wal_insert_lsn()` names where the *next* record
will start. When the last record ends exactly on a WAL page boundary (records are 8-byte aligned,
pages 8 KiB: about one wait in a thousand), that is the boundary plus the next page's header
(`.../xxx018`), while a standby's `pg_last_wal_replay_lsn()` stops at the end of the last record
(the boundary). On an idle primary nothing else is written, so the old wait sat there until the
background writer's next standby snapshot (every 15 s) or its own timeout. The test writes a
record that ends exactly on a page boundary, shows the standby parked short of the insert
position, and requires the wait to return at once.
"""

from __future__ import annotations

import time

import psycopg

PAGE = 8192
PREFIX = "mc-probe"


def _lsn(value: object) -> int:
    hi, lo = str(value).split("/")
    return (int(hi, 16) << 32) + int(lo, 16)


def _end_on_a_page_boundary(url: str) -> int:
    """Append WAL records until one ends exactly on a page boundary; that boundary."""
    with psycopg.connect(url, autocommit=True) as p:
        for _ in range(20):
            at = _lsn(p.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0])  # type: ignore[index]
            left = PAGE - at % PAGE
            # a non-transactional logical message: 24 record header + 5 long-data header + 24
            # message header + the prefix and its NUL + the payload
            size = left - (24 + 5 + 24 + len(PREFIX) + 1)
            if size < 300:  # too close to the boundary to land on it: move on a little
                p.execute("SELECT pg_logical_emit_message(false, %s, repeat('x', 400))", [PREFIX])
                continue
            p.execute("SELECT pg_logical_emit_message(false, %s, repeat('x', %s))", [PREFIX, size])
            after = _lsn(p.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0])  # type: ignore[index]
            if after % PAGE in (24, 40):  # short / long page header: the record ended on the boundary
                return after - after % PAGE
    raise AssertionError("could not end a record on a page boundary")


def test_wait_for_returns_when_the_last_record_ends_on_a_page_boundary(replica_db, pg_replica):
    primary, standby = replica_db
    with psycopg.connect(primary, autocommit=True) as p:
        p.execute("CREATE TABLE wait_probe(x int)")
        p.execute("INSERT INTO wait_probe VALUES (1)")
    boundary = _end_on_a_page_boundary(primary)
    time.sleep(0.5)  # the WAL writer flushes and the standby replays what there is
    with psycopg.connect(primary, autocommit=True) as p:
        insert = _lsn(p.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0])  # type: ignore[index]
    with psycopg.connect(standby, autocommit=True) as r:
        replayed = _lsn(r.execute("SELECT pg_last_wal_replay_lsn()").fetchone()[0])  # type: ignore[index]
    # the cause, as observed: everything is replayed, yet the standby is short of the insert position
    if insert == boundary + 24:  # (unless the background writer logged a snapshot meanwhile)
        assert replayed == boundary < insert
    started = time.monotonic()
    pg_replica.wait_for(primary, timeout=4.0)
    assert time.monotonic() - started < 3.0
    with psycopg.connect(standby, autocommit=True) as r:
        assert r.execute("SELECT count(*) FROM wait_probe").fetchone()[0] == 1  # type: ignore[index]


def test_wait_for_sees_every_commit_made_before_it(replica_db, pg_replica):
    """The wait is not satisfied early: a commit made just before it (asynchronous, maybe not yet
    flushed) is on the standby when it returns."""
    primary, standby = replica_db
    with psycopg.connect(primary, autocommit=True) as p:
        p.execute("CREATE TABLE wait_seen(x int)")
        for i in range(20):
            p.execute("INSERT INTO wait_seen VALUES (%s)", [i])
            pg_replica.wait_for(primary, timeout=10.0)
            with psycopg.connect(standby, autocommit=True) as r:
                assert r.execute("SELECT count(*) FROM wait_seen").fetchone()[0] == i + 1  # type: ignore[index]
