"""The suite's streaming replica (tests/pg_replica.py) is a real hot standby of the test server."""

from __future__ import annotations

import psycopg


def test_the_replica_is_a_streaming_standby_of_the_primary(replica_db):
    primary, standby = replica_db
    with psycopg.connect(standby, autocommit=True) as r:
        assert r.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True
        assert r.execute("SELECT status FROM pg_stat_wal_receiver").fetchone()[0] == "streaming"
