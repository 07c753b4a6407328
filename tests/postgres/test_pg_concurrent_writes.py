"""Writes on PostgreSQL run at the same time (no global writers' lock): one writer holding its
transaction open does not stop another from committing; what must stay exclusive still is (one
agent's concurrent adds of one content make one memory); the change feed's positions follow commit
order; and commits whose change numbers arrive out of order each move data_version."""

from __future__ import annotations

import threading
import time

from engine import FixedClock, HashEmbedder, open_engine
from engine.storage.postgres.listen import SPREAD, ChangeListener
from tests.direct_sql import direct

T0 = "2026-01-01T00:00:00Z"


def _open(url: str, actor: str = "tester"):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor=actor, load="now")


def _hold_open(e, entered: threading.Event, release: threading.Event, text: str) -> None:
    """A write that inserts a memory (its feed entry queued) and then keeps its transaction open."""

    def fn(conn):
        direct(conn).execute("INSERT INTO memories(content) VALUES (?)", (text,))
        entered.set()
        assert release.wait(20), "the other writer never committed"

    e.store.write(fn)


def test_a_writer_holding_its_transaction_open_does_not_block_another(pg_url):
    a, b = _open(pg_url, "agent-a"), _open(pg_url, "agent-b")
    entered, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_open, args=(a, entered, release, "held open"))
    try:
        holder.start()
        assert entered.wait(10)
        t0 = time.monotonic()
        mid = b.add_memory("committed while the other is open", agent="agent-b", dedup=False)
        took = time.monotonic() - t0
        assert not holder.join(0) and holder.is_alive()  # the first is still open...
        assert direct(b.store).one("SELECT count(*) FROM memories WHERE id = ?", (mid,))[0] == 1
        assert took < 1.5, f"the second writer waited {took:.2f} s for the first"  # ...and did not stop it
    finally:
        release.set()
        holder.join(20)
        a.close()
        b.close()


def test_feed_positions_follow_commit_order(pg_url):
    """A reader that has seen feed position n never misses a later commit below n."""
    a, b = _open(pg_url), _open(pg_url)
    entered, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_open, args=(a, entered, release, "began first"))
    try:
        holder.start()
        assert entered.wait(10)
        first = b.add_memory("committed first", dedup=False)
        release.set()
        holder.join(20)
        later = direct(a.store).one("SELECT id FROM memories WHERE content = 'began first'")[0]
        seq = dict(direct(a.store).all("SELECT memory_id, max(seq) FROM vector_changes GROUP BY memory_id"))
        assert seq[later] > seq[first]  # the one that committed later sits later in the log
        assert direct(a.store).one("SELECT count(*) FROM vector_changes_pending")[0] == 0
    finally:
        release.set()
        a.close()
        b.close()


def test_concurrent_adds_of_one_content_by_one_agent_make_one_memory(pg_url):
    engines = [_open(pg_url), _open(pg_url)]
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def add(e, agent: str) -> None:
        try:
            start.wait(10)
            e.add_memory("the deploy key rotates on Mondays", agent=agent)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=add, args=(engines[i % 2], "ops" if i < 6 else "build")) for i in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert errors == []
        rows = direct(engines[0].store).all("SELECT agent, access_count FROM memories ORDER BY agent")
        assert [r[0] for r in rows] == ["build", "ops"]  # one per agent, not one per writer
        assert engines[0].audit.verify().ok
    finally:
        for e in engines:
            e.close()


def test_commits_arriving_out_of_order_each_move_the_counter():
    seen = ChangeListener("postgresql://unused", "memconsole", lambda: 0, "")
    seen._noted("7")
    at_7 = seen._value
    assert at_7 == 7 * SPREAD
    seen._noted("5")  # a writer that took its number earlier committed later: still a change
    assert seen._value > at_7
    seen.saw(7)  # the backstop read of the sequence never takes it back
    assert seen._value > at_7
    seen._noted("9")
    assert seen._value == 9 * SPREAD
    seen.saw_commit(10)  # this process's own commit: at once...
    own = seen._value
    seen._noted("10")  # ...and its notification is not counted twice
    assert seen._value == own == 10 * SPREAD


def test_the_pool_is_sized_from_the_postgres_settings(pg_url, tmp_path, monkeypatch):
    import pytest

    from engine.errors import InvalidInput

    cfg = tmp_path / "config.toml"
    cfg.write_text("[postgres]\npool_size = 3\nprepared_statements = false\n")
    monkeypatch.setenv("MEMCONSOLE_CONFIG", str(cfg))
    e = _open(pg_url)
    try:
        assert e.store.pool.max_size == 3
        assert e.store.pool.kwargs["prepare_threshold"] is None  # behind a transaction-mode pooler
    finally:
        e.close()
    cfg.write_text("[postgres]\npool_size = 0\n")
    with pytest.raises(InvalidInput, match="postgres.pool_size must be between 1 and 1000"):
        _open(pg_url)


def test_a_remember_racing_a_forget_waits_for_its_tombstone(pg_url):
    """No global lock, yet a remember while a forget (still open) writes its tombstones waits for it
    and is then refused: the tombstone check and the tombstones take turns."""
    import pytest

    from engine.errors import Forgotten
    from engine.forget.tombstones import digest

    forgetter, agent = _open(pg_url, "officer"), _open(pg_url, "agent")
    text = "the staging root password is hunter2"
    entered, release = threading.Event(), threading.Event()

    def forget(conn):
        conn.tombstones.insert(None, "memory", "1", None, digest(text), 0.0)
        entered.set()
        release.wait(20)

    holder = threading.Thread(target=forgetter.store.write, args=(forget,))
    outcome: list[object] = []

    def remember() -> None:
        try:
            outcome.append(agent.add_memory(text, agent="agent"))
        except Forgotten as exc:
            outcome.append(exc)

    try:
        holder.start()
        assert entered.wait(10)
        racer = threading.Thread(target=remember)
        racer.start()
        racer.join(1.0)
        assert racer.is_alive() and outcome == []  # it waits for the forget's tombstones
        release.set()
        holder.join(20)
        racer.join(30)
        assert len(outcome) == 1 and isinstance(outcome[0], Forgotten)
        with pytest.raises(Forgotten):
            agent.add_memory(text, agent="agent")
    finally:
        release.set()
        forgetter.close()
        agent.close()
