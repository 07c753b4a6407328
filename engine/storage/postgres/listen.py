"""Live views on PostgreSQL: the change counter, kept fresh in memory by LISTEN/NOTIFY.

Every write that changed something bumps `mc_changes.n` and NOTIFYs the store's channel with the
new value at commit (store.py). A console polls `data_version()` often; reading the counter each
time would be a round trip per poll per console. Instead one daemon thread per store holds its
own connection, LISTENs, reads the counter once (after LISTEN, so nothing falls between) and then
takes each notification's value: `current()` is a memory read, fresh within the notification's
delivery (milliseconds), from any machine's commit.

Notifications sent while the connection is down are lost, so the poll stays the backstop: while
the listener is not connected, `current()` reads the counter itself, and the thread reconnects
(pausing up to RECONNECT_MAX_S between tries) and re-reads the counter when it is back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import psycopg

RECONNECT_MAX_S = 5.0
WAKE_S = 0.5  # how often the thread looks up from waiting to see whether it should stop


class ChangeListener:
    """The store's change counter as the last notification (or read) said it."""

    def __init__(self, url: str, channel: str, read_counter: Callable[[], int]) -> None:
        self.url = url
        self.channel = channel
        self.read_counter = read_counter  # the backstop: one query on a pool connection
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
        value = self.read_counter()
        self.saw(value)
        return value

    @property
    def backend_pid(self) -> int | None:
        """The listening connection's server process (None while not connected)."""
        conn = self._conn
        return None if conn is None else int(conn.info.backend_pid)

    def saw(self, value: int) -> None:
        """A counter value seen (a notification, a read, or this process's own commit)."""
        with self._lock:  # notifications may arrive out of order across reconnects: keep the highest
            self._value = max(self._value, value)

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
                    row = conn.execute("SELECT n FROM mc_changes WHERE id = 1").fetchone()
                    self.saw(int(row[0]) if row else 0)
                    self.connected.set()
                    pause = 0.2
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=WAKE_S):
                            with suppress(ValueError):
                                self.saw(int(note.payload))
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
