"""An engine on a streaming replica (or opened read-only) knows it (issue #24, "Read replicas"):
`read_only` is True, every write refuses with one ReadOnly line before trying (never the driver's
"ReadOnlySqlTransaction"), a search records no access, and live views follow the standby's
replay position (LISTEN is refused during recovery)."""

from __future__ import annotations

import time

import pytest

from engine import HashEmbedder, open_engine
from engine.errors import ReadOnly

STANDBY_LINE = "read-only replica: writes go to the primary"


@pytest.fixture
def primary_and_replica(replica_db, clock):
    primary_url, standby_url = replica_db
    primary = open_engine(primary_url, embedder=HashEmbedder(), clock=clock, actor="tester")
    mid = primary.add_memory("the deploy key rotates every ninety days", agent="ops")
    standby = open_engine(standby_url, embedder=HashEmbedder(), clock=clock, actor="tester")
    yield primary, standby, mid
    standby.close()
    primary.close()


def _replayed(replica, url, timeout=10.0):
    replica.wait_for(url, timeout)


def test_an_engine_on_a_standby_is_read_only_and_says_so(primary_and_replica, replica_db, pg_replica):
    primary, standby, mid = primary_and_replica
    assert primary.read_only is False and standby.read_only is True
    assert standby.standby is True and standby.read_only_reason == STANDBY_LINE
    _replayed(pg_replica, replica_db[0])
    writes = {
        "add_memory": lambda: standby.add_memory("a new thing to remember on the replica"),
        "pin": lambda: standby.memories.pin(mid),
        "forget open": lambda: standby.forget.open("memory", [mid], "gdpr"),
        "decay pass": lambda: standby.decay.run(),
    }
    for name, write in writes.items():
        with pytest.raises(ReadOnly) as err:
            write()
        line = str(err.value)
        assert STANDBY_LINE in line and "\n" not in line, name
    assert standby.memories.get(mid).tier == "active"  # reads work


def test_a_search_on_a_standby_records_no_access(primary_and_replica, replica_db, pg_replica):
    primary, standby, mid = primary_and_replica
    _replayed(pg_replica, replica_db[0])
    before = primary.memories.get(mid).access_count
    # An agent-style search (record_access=True) would write: on a standby it only reads.
    hits = standby.search("deploy key rotates", record_access=True).hits
    assert [h.id for h in hits] == [mid]
    assert primary.memories.get(mid).access_count == before


def test_a_standby_follows_a_primary_commit_within_a_second(primary_and_replica):
    primary, standby, _ = primary_and_replica
    v0 = standby.data_version()
    time.sleep(0.1)
    primary.add_memory("a commit the replica's live view must see", agent="ops")
    t0 = time.monotonic()
    while standby.data_version() == v0:
        assert time.monotonic() - t0 < 1.0, "the standby's data_version did not move within 1 s"
        time.sleep(0.02)
    # polled, not listened: no reconnect loop against a server that refuses LISTEN
    assert standby.store.listener.reconnects == 0


@pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
def test_an_engine_opened_read_only_refuses_writes_and_records_no_access(db_path, clock):
    with open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="tester") as rw:
        mid = rw.add_memory("the backup window opens at midnight")
        before = rw.memories.get(mid).access_count
    ro = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="tester", read_only=True)
    try:
        assert ro.read_only is True and ro.standby is False
        assert ro.read_only_reason == "opened read-only: nothing is written"
        with pytest.raises(ReadOnly, match="opened read-only"):
            ro.add_memory("something else entirely")
        with pytest.raises(ReadOnly, match="opened read-only"):
            ro.memories.pin(mid)
        assert [h.id for h in ro.search("backup window", record_access=True).hits] == [mid]
        assert ro.memories.get(mid).access_count == before
    finally:
        ro.close()


def test_a_server_that_makes_transactions_read_only_is_found_read_only(pg_server, clock):
    """Not a standby, but the database (or role) defaults to read-only transactions: the engine
    says so in one line instead of letting the driver's ReadOnlySqlTransaction through."""
    from urllib.parse import urlsplit

    import psycopg

    url = pg_server.fresh()
    try:
        name = urlsplit(url).path.lstrip("/")
        pg_server.admin.execute(f"ALTER DATABASE {name} SET default_transaction_read_only = on")
        eng = open_engine(url, embedder=HashEmbedder(), clock=clock, actor="tester")
        try:
            assert eng.read_only and not eng.standby
            assert "default_transaction_read_only" in eng.read_only_reason
            with pytest.raises(ReadOnly, match="default_transaction_read_only"):
                eng.add_memory("a write the server would refuse")
            assert eng.search("anything").hits == []
        finally:
            eng.close()
        with psycopg.connect(url, autocommit=True) as c:
            assert c.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    finally:
        pg_server.drop(url)
