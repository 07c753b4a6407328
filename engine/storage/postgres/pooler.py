"""A connection pooler (PgBouncer, pgcat, Odyssey) between the engine and the server, as the store
sees it (issue #24; tests/postgres/test_pg_bouncer.py runs the engine through a real PgBouncer in
`pool_mode = transaction`).

- Recognised when the store opens: a pooler hands the client a process id of its own making (the
  cancel key it answers for), so `pg_backend_pid()` (the server process that ran the query) is not
  the one the connection was told. Directly connected, they are always equal.
- In transaction mode each transaction may run on another server connection, so the store then
  keeps nothing that lives in a server session (whatever the mode: a client cannot tell
  transaction from session pooling):
  - no server-side prepared statements (psycopg prepares a statement after a few runs; the next
    transaction's server connection has none, or another client's of the same name: "prepared
    statement _pg3_0 already exists"). PgBouncer >= 1.21 can track them; without it, or in
    doubt, the unprepared statement costs one parse;
  - no LISTEN: it would register on whichever server connection ran it, then hand that connection
    (and its notifications) to other clients, while this process waited for notifications that
    never come: a live view would silently stop. The change counter is polled instead
    (`PolledCounter`: the change sequence, read at most every MIN_POLL_S);
  - no session advisory lock (the pg_trgm index build's): its build is left to a direct
    connection (doctor says the indexes are missing; the trigram search scans meanwhile).
- A pooler in statement mode refuses every transaction: opening says so in one line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import psycopg

from engine.errors import EngineError
from engine.storage.postgres.listen import ChangeListener

MIN_POLL_S = 0.05  # however often views ask, the sequence is read at most this often


def behind_pooler(conn: psycopg.Connection[Any]) -> bool:
    """Whether `conn` reaches the server through a pooler (see the module's docstring)."""
    row = conn.execute("SELECT pg_backend_pid()").fetchone()
    return row is not None and int(row[0]) != int(conn.info.backend_pid)


def check_transactions(shown_url: str, conn: psycopg.Connection[Any]) -> None:
    """Refuse, in one line, a pooler in statement mode: every engine write and snapshot is a
    transaction, which it refuses (and then drops the connection: call this last)."""
    try:
        with conn.transaction():
            conn.execute("SELECT 1")
    except psycopg.errors.ProtocolViolation as exc:
        first = (str(exc).strip().splitlines() or ["transactions refused"])[0]
        raise EngineError(
            f"{shown_url}: the connection pooler refuses transactions ({first}); memconsole needs"
            " pool_mode = transaction or session"
        ) from None


class PolledCounter(ChangeListener):
    """The change counter without LISTEN: the sequence read (through a pooled connection) at most
    every MIN_POLL_S. The same numbers as ChangeListener (its own commits are counted at once)."""

    def __init__(self, read_counter: Callable[[], int], counter_sql: str) -> None:
        super().__init__("", "", read_counter, counter_sql)
        self._polled = 0.0

    def current(self) -> int:
        now = time.monotonic()
        if now - self._polled >= MIN_POLL_S:
            self._polled = now
            self.saw(self.read_counter())
        with self._lock:
            return self._value

    def close(self) -> None:
        """No thread, no connection of its own: nothing to stop."""
