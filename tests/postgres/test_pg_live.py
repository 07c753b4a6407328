"""Live views on PostgreSQL: the change counter comes from LISTEN/NOTIFY (a memory read while
listening), another process's commit is seen within a second, a lost connection falls back to
reading the change sequence and the listener comes back, and an open console refreshes on its own.
No row is updated by every write (the old mc_changes counter), and commits arriving out of order
each move the counter."""

from __future__ import annotations

import subprocess
import sys
import time

import psycopg

from engine import FixedClock, HashEmbedder, open_engine
from tests.postgres.console_follow import refresh_after

T0 = "2026-01-01T00:00:00Z"
WRITER = """
import sys
from engine import FixedClock, HashEmbedder, open_engine
e = open_engine(sys.argv[1], embedder=HashEmbedder(), clock=FixedClock("2026-01-01T00:00:00Z"), load="now")
e.add_memory(sys.argv[2], dedup=False)
e.close()
"""


def _open(url: str):
    return open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="tester", load="now")


def _write_elsewhere(url: str, text: str) -> float:
    """Another process adds a memory; returns the time.monotonic() when it had committed."""
    subprocess.run([sys.executable, "-c", WRITER, url, text], check=True, timeout=60)
    return time.monotonic()


def _until(cond, timeout: float) -> float | None:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if cond():
            return time.monotonic()
        time.sleep(0.005)
    return None


def test_another_process_commit_reaches_data_version_within_a_second_without_queries(pg_url):
    e = _open(pg_url)
    try:
        before = e.data_version()
        assert e.store.listener.connected.wait(5)
        # While listening, data_version is a memory read: no pool connection is taken.
        taken = e.store.pool.get_stats().get("requests_num", 0)
        for _ in range(50):
            assert e.data_version() == before
        assert e.store.pool.get_stats().get("requests_num", 0) == taken
        done = _write_elsewhere(pg_url, "written by another process")
        seen = _until(lambda: e.data_version() > before, 1.0)
        assert seen is not None, "the other process's commit was not seen within 1 s"
        print(f"seen {1000 * max(seen - done, 0):.1f} ms after the writer exited")
        own = e.data_version()
        e.add_memory("this process's own write", dedup=False)
        assert e.data_version() > own  # its own commit: at once, no waiting for the notification
    finally:
        e.close()


def test_a_lost_listener_connection_falls_back_to_reading_and_reconnects(pg_url):
    e = _open(pg_url)
    try:
        e.data_version()
        listener = e.store.listener
        assert listener.connected.wait(5)
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [listener.backend_pid])
            assert _until(lambda: not listener.connected.is_set(), 5) is not None
            # A commit while the listener is down: its notification is lost, the read finds it.
            before = e.data_version()
            _write_elsewhere(pg_url, "while the listener is down")
        got = _until(lambda: e.data_version() > before, 5)
        assert got is not None
        assert listener.connected.wait(10), "the listener did not reconnect"
        assert listener.reconnects >= 1
        before = e.data_version()
        _write_elsewhere(pg_url, "after the reconnect")
        assert _until(lambda: e.data_version() > before, 1.0) is not None
    finally:
        e.close()


async def test_an_open_console_refreshes_within_a_second_of_another_process_commit(pg_url):
    e = _open(pg_url)
    e.add_memory("the first memory", dedup=False)
    try:
        waited = await refresh_after(
            e, "pg", lambda: _write_elsewhere(pg_url, "a memory from another machine")
        )
        print(f"console refreshed {1000 * waited:.0f} ms after the other process's commit")
        assert waited < 1.0
    finally:
        e.close()
