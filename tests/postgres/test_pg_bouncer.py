"""The engine through a real PgBouncer in `pool_mode = transaction` (tests/pg_bouncer.py: three
server connections per database and user, shared by every client), issue #24: agents in several
processes and threads writing and recalling at once, dedup, a forget and its verification, a viewer
and an admin interleaved on one bouncer (neither gets the other's rights), the MCP HTTP server and a
live console on a bouncer URL.

Run as a module, this file is an agent process: `python -m tests.postgres.test_pg_bouncer URL WID N
THREADS` runs THREADS threads on one engine, each alternating remember and recall N times; it
prints `M id wid thread i` once a write returned and `E ...` for any error that reached it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from engine import FixedClock, HashEmbedder, open_engine
from engine.errors import Refused
from engine.identity import parse_actor
from engine.storage.postgres.listen import ChangeListener
from engine.storage.postgres.pooler import PolledCounter
from tests.pg_bouncer import POOL_SIZE, PgBouncer

ROOT = Path(__file__).resolve().parents[2]
T0 = "2026-01-01T00:00:00Z"


def _open(url: str, actor: str = "tester", **kw):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor=actor, load="now", **kw)


def content(wid: int, t: int, i: int) -> str:
    return f"agent {wid} thread {t} noted item {i} about the pooled fleet, token b{wid}t{t}x{i}"


def _until(cond, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return False


def _together(*fns, gate: threading.Barrier | None = None) -> None:
    """Run `fns` in threads at once; re-raise the first one's failure (a broken barrier frees the
    others instead of leaving them waiting)."""
    failed: list[BaseException] = []

    def run(fn) -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            failed.append(exc)
            if gate is not None:
                gate.abort()

    workers = [threading.Thread(target=run, args=(fn,), daemon=True) for fn in fns]
    for w in workers:
        w.start()
    for w in workers:
        w.join(90)
    if failed:
        raise failed[0]
    assert not any(w.is_alive() for w in workers), "a thread did not finish in 90 s"


class Peak:
    """The most client and server connections the bouncer held for one database, sampled."""

    def __init__(self, bouncer: PgBouncer, database: str) -> None:
        self.bouncer, self.database = bouncer, database
        self.clients = self.servers = 0
        self.error = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                clients = sum(1 for r in self.bouncer.admin("SHOW CLIENTS") if r["database"] == self.database)
                self.clients = max(self.clients, clients)
                self.servers = max(self.servers, self.bouncer.server_connections(self.database))
                self._stop.wait(0.05)
        except Exception as exc:  # noqa: BLE001 - the test fails with it
            self.error = f"{type(exc).__name__}: {exc}"

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def test_the_store_knows_a_pooler_and_keeps_no_session_state_through_it(pg_bouncer, pg_db):
    """Recognised at opening (the pid the bouncer hands out is not the server process's): no
    prepared statements (psycopg would prepare a statement run 5 times; the next transaction's
    server connection has another client's `_pg3_0`), and live views poll the change sequence
    (a LISTEN would sit on a shared server connection: the view would silently stop)."""
    direct = _open(pg_db)
    via = _open(pg_bouncer.url(pg_db))
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
        assert _until(lambda: via.data_version() > before, 1.0), "the commit was not seen within 1 s"
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

    direct = _open(pg_db)
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
    _open(pg_bouncer.url(pg_db)).close()
    assert builds == []
    _open(pg_db).close()  # the server itself: built (or found built) as before
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

    a, b = _open(url, "a"), _open(url, "b")
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
    a, b = _open(url, "a"), _open(url, "b")
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
    session = _open(pg_bouncer.alias(pg_db, "session"))
    try:
        mid = session.add_memory("a session-pooled fleet note", dedup=True)
        assert [h.id for h in session.search("fleet", mode="keyword", record_access=False).hits] == [mid]
        assert session.audit.verify().ok
    finally:
        session.close()


def _spawn(url: str, wid: int, n: int, threads: int, out: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    with open(out, "wb") as fh:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.postgres.test_pg_bouncer", url, str(wid), str(n), str(threads)],
            cwd=ROOT,
            stdout=fh,
            stderr=subprocess.PIPE,
            env=env,
        )


def test_agents_in_processes_and_threads_write_and_recall_through_three_server_connections(
    pg_bouncer, pg_db, capsys
):
    from console.cli import main

    url = pg_bouncer.url(pg_db)
    procs, threads, n = 3, 2, 12
    database = urlsplit(pg_db).path.lstrip("/")
    with Peak(pg_bouncer, database) as peak:
        running = [
            _spawn(url, w, n, threads, Path(f"{pg_bouncer.folder}/agent{w}.txt")) for w in range(procs)
        ]
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
    a, b = _open(url, "agent-a"), _open(url, "agent-b")
    try:
        ids: list[int] = []
        gate = threading.Barrier(2, timeout=30)

        def same(eng) -> None:
            for r in range(4):
                gate.wait()
                ids.append(eng.add_memory(f"the shared fact number {r}", agent="ops", dedup=True))

        _together(lambda: same(a), lambda: same(b), gate=gate)
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


@pytest.fixture
def viewer_login(pg_server):
    name = f"mc_bv_{uuid.uuid4().hex[:8]}"
    pg_server.admin.execute(f"CREATE ROLE {name} LOGIN")
    yield name
    for db in list(pg_server._names.values()):  # its grants live in each test database
        try:
            with psycopg.connect(pg_server.uri(db), autocommit=True) as c:
                c.execute(f"DROP OWNED BY {name}")
        except psycopg.Error:
            pass
    pg_server.admin.execute(f"DROP ROLE IF EXISTS {name}")


def test_a_viewer_and_an_admin_interleaved_on_one_bouncer_never_share_rights(
    pg_bouncer, pg_db, viewer_login, monkeypatch, capsys
):
    """Identity is the connection's `current_user` and roles are GRANTs (no SET ROLE, no session
    setting): PgBouncer keeps one pool per (database, user), so a viewer's transactions never run on
    the admin's server connections nor the other way round, however they interleave."""
    from console.cli import main

    admin = open_engine(pg_bouncer.url(pg_db), embedder=HashEmbedder(), clock=FixedClock(T0), load="now")
    mid = admin.add_memory("deploys need a change ticket")
    admin.operators.grant(viewer_login, "viewer")
    viewer = open_engine(
        pg_bouncer.url(pg_db, viewer_login), embedder=HashEmbedder(), clock=FixedClock(T0), load="now"
    )
    seen: dict[str, set[str]] = {"viewer": set(), "admin": set()}
    errors: list[str] = []
    try:
        assert viewer.store.pooled
        gate = threading.Barrier(2, timeout=30)

        def as_viewer() -> None:
            for _ in range(6):
                gate.wait()
                me = viewer.operators.whoami()
                seen["viewer"].add(f"{me.verified}:{me.role}")
                try:
                    viewer.memories.pin(mid)
                    errors.append("the viewer pinned a memory")
                except Refused as exc:
                    assert "needs the curator role" in str(exc)
                with psycopg.connect(pg_bouncer.url(pg_db, viewer_login), autocommit=True) as raw:
                    seen["viewer"].add(raw.execute("SELECT current_user").fetchone()[0])
                    try:
                        raw.execute("UPDATE memories SET pinned = 1 WHERE id = %s", [mid])
                        errors.append("the viewer's UPDATE went through")
                    except psycopg.errors.InsufficientPrivilege:
                        pass

        def as_admin() -> None:
            for r in range(6):
                gate.wait()
                me = admin.operators.whoami()
                seen["admin"].add(f"{me.verified}:{me.role}")
                (admin.memories.pin if r % 2 == 0 else admin.memories.unpin)(mid)

        _together(as_viewer, as_admin, gate=gate)
        assert errors == []
        assert seen["viewer"] == {f"{viewer_login}:viewer", viewer_login}
        assert seen["admin"] == {"postgres:admin"}
        refused = [
            r for r in admin.audit.log(action="refused") if parse_actor(r.actor).verified == viewer_login
        ]
        assert len(refused) == 6  # each refusal audited under the viewer's own role
    finally:
        viewer.close()
        admin.close()
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "none")
    capsys.readouterr()
    assert main(["--db", pg_bouncer.url(pg_db, viewer_login), "memory", "pin", str(mid)]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs the curator role" in err and len(err.splitlines()) == 1, err


async def test_the_mcp_http_server_on_a_bouncer_url(pg_bouncer, pg_db, tmp_path):
    import asyncio

    from tests.agents.conftest import RW_TOKEN, TOKENS, free_port, http_server, write_tokens
    from tests.agents.test_mcp_http import client

    url = pg_bouncer.url(pg_db)
    port = free_port()
    tokens = write_tokens(tmp_path / "tokens", TOKENS + "other-token-0123456789abcd other\n")
    with http_server(url, tokens, port):  # type: ignore[arg-type]
        mcp = f"http://127.0.0.1:{port}/mcp"
        async with client(mcp, RW_TOKEN) as rw, client(mcp, "other-token-0123456789abcd") as other:
            writes = [
                c.call_tool("remember", {"content": f"{who} says the blue pipeline deploys item {i}"})
                for i in range(4)
                for who, c in (("laptop", rw), ("other", other))
            ]
            results = await asyncio.gather(*writes)
            assert not any(r.is_error for r in results), [r.content for r in results]
            recalls = await asyncio.gather(
                *(c.call_tool("recall", {"query": "blue pipeline"}) for c in (rw, other))
            )
            assert not any(r.is_error for r in recalls), [r.content for r in recalls]
            assert all("blue pipeline" in str(r.content) for r in recalls)
    with psycopg.connect(pg_db, autocommit=True) as c:
        actors = dict(
            c.execute("SELECT actor, count(*) FROM audit WHERE action = 'add' GROUP BY 1").fetchall()
        )
    assert actors == {"laptop": 4, "other": 4}


async def test_an_open_console_on_a_bouncer_url_follows_another_process_commit(pg_bouncer, pg_db):
    from console.app import MemConsole
    from console.app.widgets.header import StatusHeader

    url = pg_bouncer.url(pg_db)
    e = _open(url)
    e.add_memory("the first memory", dedup=False)
    app = MemConsole(e, start_embedder=False, db_label="pg via pgbouncer")
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            header = app.query_one(StatusHeader)

            async def total() -> int:
                await pilot.pause(0.01)
                counts = header.counts
                return -1 if counts is None else sum(counts.memories_by_tier.values())

            deadline = time.monotonic() + 10
            while await total() != 1 and time.monotonic() < deadline:
                pass
            assert await total() == 1
            while app._data_version is None and time.monotonic() < deadline:
                await pilot.pause(0.05)
            other = _open(url, "elsewhere")
            other.add_memory("a memory from another machine", dedup=False)
            other.close()
            done = time.monotonic()
            while await total() != 2 and time.monotonic() - done < 3:
                pass
            waited = time.monotonic() - done
            assert await total() == 2
            print(f"console via the bouncer refreshed {1000 * waited:.0f} ms after the commit")
            assert waited < 1.5
        assert app.errors == []
    finally:
        e.close()


def _agent(url: str, wid: int, n: int, threads: int) -> None:
    eng = _open(url, f"agent-{wid}")
    lock = threading.Lock()

    def say(line: str) -> None:
        with lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def run(t: int) -> None:
        for i in range(n):
            try:
                mid = eng.add_memory(content(wid, t, i), agent=f"agent-{wid}", dedup=True)
                say(f"M {mid} {wid} {t} {i}")
                hits = eng.search(f"b{wid}t{t}x{i}", k=3, agent=f"agent-{wid}").hits
                if mid not in [h.id for h in hits]:
                    say(f"E {wid} {t} {i} recall missed {mid}")
            except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails on any
                say(f"E {wid} {t} {i} {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")

    workers = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    eng.close()
    say("DONE")


if __name__ == "__main__":
    _agent(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
