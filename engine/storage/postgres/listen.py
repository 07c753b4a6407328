"""Live views on PostgreSQL: a change counter kept fresh in memory by LISTEN/NOTIFY, with no row
that every write updates.

Every write that changed something takes the next value of a sequence (`mc_change_seq`: nextval
holds no lock to the end of the transaction, so writers never wait on each other for it) and
NOTIFYs the store's channel with it at commit (store.py). A console polls `data_version()` often;
one daemon thread per store holds its own session connection, LISTENs, and takes each
notification: `current()` is a memory read, fresh within the notification's delivery
(milliseconds), from any machine's commit.

Two writers' numbers can commit in the other order; each commit must still move the value. So
the value is SPREAD x the highest number seen, plus one for each notification that arrived below
it (at most as many as transactions were in flight at once, far fewer than SPREAD).

Notifications sent while the connection is down are lost, so reading the sequence is the
backstop: while the listener is not connected, `current()` reads it, and the thread reconnects
(pausing up to RECONNECT_MAX_S between tries) and reads it again when it is back.

LISTEN needs a session connection: behind a pooler (PgBouncer) it would land on a server
connection other clients share and hear nothing, while saying it listens (tests/postgres/
test_pg_bouncer.py), so there the store polls the sequence instead (pooler.PolledCounter).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import psycopg

RECONNECT_MAX_S = 5.0
WAKE_S = 0.5  # how often the thread looks up from waiting to see whether it should stop
SPREAD = 1 << 16  # above any number of transactions in flight at once (max_connections)


class ChangeListener:
    """The store's change counter as the last notification (or read) said it."""

    def __init__(self, url: str, channel: str, read_counter: Callable[[], int], counter_sql: str) -> None:
        self.url = url
        self.channel = channel
        self.read_counter = read_counter  # the backstop: one query on a pool connection
        self.counter_sql = counter_sql  # the same, on the listener's own connection
        self._own: dict[int, None] = {}  # payloads of this process's commits, already counted
        self.connected = threading.Event()
        self.reconnects = 0
        self._value = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: psycopg.Connection[Any] | None = None

    def current(self) -> int:
        """The change counter: from memory while listening, else read (and listening restarted)."""
        if self.connected.is_set():
            return self._value
        self._ensure_thread()
        self.saw(self.read_counter())
        with self._lock:
            return self._value

    @property
    def backend_pid(self) -> int | None:
        """The listening connection's server process (None while not connected)."""
        conn = self._conn
        return None if conn is None else int(conn.info.backend_pid)

    def saw(self, number: int) -> None:
        """The sequence read: every number up to it has been taken."""
        with self._lock:
            self._value = max(self._value, number * SPREAD)

    def saw_commit(self, number: int) -> None:
        """This process's own commit (its notification, when it comes, is not counted again)."""
        with self._lock:
            self._value = max(self._value + 1, number * SPREAD)
            self._own[number] = None
            if len(self._own) > 1024:
                self._own.pop(next(iter(self._own)))

    def _noted(self, payload: str) -> None:
        try:
            number = int(payload)
        except ValueError:
            return
        with self._lock:
            if number in self._own:
                del self._own[number]
                return
            self._value = max(self._value + 1, number * SPREAD)

    def _ensure_thread(self) -> None:
        if self._stop.is_set() or (self._thread is not None and self._thread.is_alive()):
            return
        self._thread = threading.Thread(target=self._run, name="memconsole-listen", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        pause = 0.2
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conn:
                    self._conn = conn
                    conn.execute(f"LISTEN {self.channel}")  # a fixed name from store.py, not input
                    row = conn.execute(self.counter_sql).fetchone()
                    self.saw(int(row[0]) if row else 0)
                    self.connected.set()
                    pause = 0.2
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=WAKE_S):
                            self._noted(note.payload)
                        # A dead server stays silent: a cheap probe every wake finds out.
                        conn.execute("SELECT 1")
            except Exception:  # noqa: BLE001 - any failure: drop to the backstop, try again
                pass
            finally:
                self.connected.clear()
                self._conn = None
            if self._stop.is_set():
                break
            self.reconnects += 1
            self._stop.wait(pause)
            pause = min(pause * 2, RECONNECT_MAX_S)

    def close(self) -> None:
        self._stop.set()
        conn = self._conn
        if conn is not None:
            with suppress(Exception):
                conn.cancel_safe(timeout=1.0)
        if self._thread is not None:
            self._thread.join(timeout=2 * WAKE_S + 1)
