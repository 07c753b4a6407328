"""The engine through a real PgBouncer in `pool_mode = transaction` (tests/pg_bouncer.py: three
server connections per database and user, shared by every client), issue #24: the store knows the
pooler (no session state, no LISTEN, statement mode refused, an unknown pooler named in one line),
agents in several processes and threads writing and recalling at once, dedup, a forget and its
verification. Rights, the MCP server and a live console: test_pg_bouncer_doors.py."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from engine.storage.postgres.listen import ChangeListener
from engine.storage.postgres.pooler import PolledCounter
from tests.pg_bouncer import POOL_SIZE
from tests.postgres.bouncer_agents import Peak, content, opened, spawn, together, until


def test_the_store_knows_a_pooler_and_keeps_no_session_state_through_it(pg_bouncer, pg_db):
    """Recognised at opening (the pid the bouncer hands out is not the server process's): no
    prepared statements (psycopg would prepare a statement run 5 times; the next transaction's
    server connection has another client's `_pg3_0`), and live views poll the change sequence
    (a LISTEN would sit on a shared server connection: the view would silently stop)."""
    direct = opened(pg_db)
    via = opened(pg_bouncer.url(pg_db))
    try:
        assert not direct.store.pooled and type(direct.store.listener) is ChangeListener
        assert via.store.pooled and isinstance(via.store.listener, PolledCounter)
        for i in range(12):  # well past psycopg's prepare threshold, over three server connections
            via.add_memory(f"pooled note {i} token p{i}", dedup=True)
            assert [h.content for h in via.search(f"p{i}", mode="keyword", record_access=False).hits] == [
                f"pooled note {i} token p{i}"
            ]
        # Another client's commit moves the polled counter (the console's live view follows it).
        before = via.data_version()
        direct.add_memory("written beside the bouncer", dedup=False)
        assert until(lambda: via.data_version() > before, 1.0), "the commit was not seen within 1 s"
        own = via.data_version()
        via.add_memory("its own write", dedup=False)
        assert via.data_version() > own
    finally:
        via.close()
        direct.close()


def test_a_listen_through_the_bouncer_would_never_hear_a_commit(pg_bouncer, pg_db):
    """Why the store polls behind a pooler: the old listener on a bouncer URL says it is connected
    (its LISTEN ran, on some server connection), and three commits later it has heard none."""
    from engine.storage.postgres.store import CHANNEL, COUNTER_SQL

    direct = opened(pg_db)
    listener = ChangeListener(pg_bouncer.url(pg_db), CHANNEL, lambda: 0, COUNTER_SQL)
    try:
        listener.current()
        assert listener.connected.wait(5)
        before = listener.current()
        for i in range(3):
            direct.add_memory(f"unheard {i}", dedup=False)
        time.sleep(0.5)
        assert listener.connected.is_set() and listener.current() == before
    finally:
        listener.close()
        direct.close()


def test_behind_a_pooler_opening_takes_no_session_lock(pg_bouncer, pg_db, monkeypatch):
    """The pg_trgm index build holds a session advisory lock across statements (trigram_index.py):
    through a transaction-mode pooler its unlock could run on another server connection and the
    lock stay held by a connection other clients get. Behind a pooler opening leaves it alone."""
    from engine.storage.postgres import trigram_index

    builds: list[object] = []
    monkeypatch.setattr(trigram_index, "ensure", builds.append)
    opened(pg_bouncer.url(pg_db)).close()
    assert builds == []
    opened(pg_db).close()  # the server itself: built (or found built) as before
    assert len(builds) == 1


def test_an_unrecognised_pooler_says_in_one_line_to_turn_prepared_statements_off(
    pg_bouncer, pg_db, monkeypatch, tmp_path
):
    """A pooler the store does not recognise (here: recognition switched off) loses psycopg's
    prepared statements between transactions: one line naming the setting, never a traceback or
    "not supported"; with `[postgres] prepared_statements = false` the same calls pass."""
    from engine.errors import EngineError
    from engine.storage.postgres import store

    monkeypatch.setattr(store, "behind_pooler", lambda conn: False)
    url = pg_bouncer.url(pg_db)

    def busy(a, b) -> None:
        for i in range(30):  # two engines' connections, one LIFO server connection: _pg3_0 meets
            for e in (a, b):
                e.add_memory(f"note {i} token u{i}", dedup=True)
                e.search(f"u{i}", mode="keyword", record_access=False)

    a, b = opened(url, "a"), opened(url, "b")
    try:
        with pytest.raises(EngineError) as got:
            busy(a, b)
        assert "prepared_statements = false" in str(got.value) and "\n" not in str(got.value)
    finally:
        a.close()
        b.close()
    config = tmp_path / "config.toml"
    config.write_text("[postgres]\nprepared_statements = false\n")
    monkeypatch.setenv("MEMCONSOLE_CONFIG", str(config))
    a, b = opened(url, "a"), opened(url, "b")
    try:
        busy(a, b)
    finally:
        a.close()
        b.close()


def test_statement_pooling_is_refused_in_one_line_and_session_pooling_works(
    pg_bouncer, pg_db, monkeypatch, capsys
):
    """The other two pool modes: statement mode refuses the transactions every write and snapshot
    is (opening says so at once, instead of a pool that never fills); session mode works."""
    from console.cli import main

    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    capsys.readouterr()
    t = time.monotonic()
    assert main(["--db", pg_bouncer.alias(pg_db, "statement"), "search", "fleet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "pool_mode = transaction or session" in err and len(err.splitlines()) == 1, err
    assert time.monotonic() - t < 5
    session = opened(pg_bouncer.alias(pg_db, "session"))
    try:
        mid = session.add_memory("a session-pooled fleet note", dedup=True)
        assert [h.id for h in session.search("fleet", mode="keyword", record_access=False).hits] == [mid]
        assert session.audit.verify().ok
    finally:
        session.close()


def test_agents_in_processes_and_threads_write_and_recall_through_three_server_connections(
    pg_bouncer, pg_db, capsys
):
    from console.cli import main

    url = pg_bouncer.url(pg_db)
    procs, threads, n = 3, 2, 12
    database = urlsplit(pg_db).path.lstrip("/")
    with Peak(pg_bouncer, database) as peak:
        running = [spawn(url, w, n, threads, Path(f"{pg_bouncer.folder}/agent{w}.txt")) for w in range(procs)]
        for p in running:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err.decode()[-2000:]
    acked: dict[int, str] = {}
    for w in range(procs):
        lines = Path(f"{pg_bouncer.folder}/agent{w}.txt").read_text().splitlines()
        assert [ln for ln in lines if ln.startswith("E ")] == []  # no error reached an agent
        assert lines[-1] == "DONE"
        for ln in lines:
            if ln.startswith("M "):
                _, mid, wid, t, i = ln.split()
                acked[int(mid)] = content(int(wid), int(t), int(i))
    assert len(acked) == procs * threads * n
    with psycopg.connect(pg_db, autocommit=True) as c:  # the server itself, not the bouncer
        rows = dict(c.execute("SELECT id, content FROM memories").fetchall())
        accesses = c.execute("SELECT count(*) FROM audit WHERE action = 'access'").fetchone()[0]
    assert {mid: rows.get(mid) for mid in acked} == acked  # every acknowledged write, as written
    assert accesses > 0  # the recalls recorded access (writes inside the pooled transactions)
    # Many clients, never more than the pool's server connections (per user: all are postgres).
    assert peak.error == ""
    assert peak.clients > POOL_SIZE and 0 < peak.servers <= POOL_SIZE
    capsys.readouterr()
    assert main(["--db", url, "audit", "--verify"]) == 0
    assert "audit chain intact" in capsys.readouterr().out
    with capsys.disabled():
        print(f"\npeak through the bouncer: {peak.clients} clients on {peak.servers} server connections")


def test_dedup_and_a_forget_with_its_verification_through_the_bouncer(pg_bouncer, pg_db):
    url = pg_bouncer.url(pg_db)
    a, b = opened(url, "agent-a"), opened(url, "agent-b")
    try:
        ids: list[int] = []
        gate = threading.Barrier(2, timeout=30)

        def same(eng) -> None:
            for r in range(4):
                gate.wait()
                ids.append(eng.add_memory(f"the shared fact number {r}", agent="ops", dedup=True))

        together(lambda: same(a), lambda: same(b), gate=gate)
        assert len(ids) == 8 and len(set(ids)) == 4  # each round: one memory, both told its id
        secret = f"the vault code is zephyr-{uuid.uuid4().hex[:6]}"
        keep = a.add_memory("deploys go through the staging cluster first", dedup=False)
        gone = a.add_memory(secret, agent="ops", dedup=False)
        res = a.forget.run("memory", [gone], "user asked")
        levels = {lv.name: lv for lv in res.verification.levels}
        assert levels["logical"].checked and levels["logical"].residue == 0
        assert b.search("vault code zephyr", mode="keyword", record_access=False).hits == []
        assert b.forget.is_forgotten("memory", text=secret)
        assert b.memories.get(keep).content.startswith("deploys")
        check = b.audit.verify()
        assert check.ok, check.message
        paths = b.store.query(b.store.health.paths)  # doctor's lines on the paths this server takes
        doctor = {name: (sound, line) for name, sound, line in paths}
        assert doctor["connection-pooler"][0] and "live views poll" in doctor["connection-pooler"][1]
    finally:
        a.close()
        b.close()
