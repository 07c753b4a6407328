"""A PostgreSQL standby (a streaming read replica) as the store sees it: how it is recognised,
and how live views follow it.

- Recognised when the store opens: `pg_is_in_recovery()` (a hot standby), or a server that makes
  this role's transactions read-only (`default_transaction_read_only`); the store is then
  read-only and says why (engine/storage/readonly.py).
- Live views: LISTEN is refused during recovery (and NOTIFY is never sent by a standby), so a
  standby's change counter is its WAL replay position, `pg_last_wal_replay_lsn()`, polled: it
  moves as soon as the standby replays a commit of the primary (any commit of the cluster, so a
  view may refresh once for another database's write: harmless). Reads are spaced at least
  MIN_POLL_S apart however often views ask.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from engine.storage import readonly

MIN_POLL_S = 0.05


def read_only_kind(conn: psycopg.Connection[Any]) -> str | None:
    """Why the server refuses this connection's writes (engine/storage/readonly.py's kinds), or
    None when it takes them."""
    row = conn.execute(
        "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only')"
    ).fetchone()
    if row is None:
        return None
    if row[0]:
        return readonly.STANDBY
    if str(row[1]).lower() in ("on", "true"):
        return readonly.SESSION
    return None


REPLAY_POSITION = "SELECT coalesce(pg_last_wal_replay_lsn(), pg_last_wal_receive_lsn(), '0/0') - '0/0'"


class ReplayPoller:
    """A standby's data_version: its WAL replay position (bytes), read at most every MIN_POLL_S.
    The same face as listen.ChangeListener (current / saw / close), so the store holds either."""

    def __init__(self, pool: ConnectionPool[Any]) -> None:
        self._pool = pool
        self._value = 0
        self._at = 0.0
        self._lock = threading.Lock()
        self.connected = threading.Event()  # never "listening": a standby is polled
        self.reconnects = 0
        self.backend_pid: int | None = None

    def current(self) -> int:
        with self._lock:
            now = time.monotonic()
            if now - self._at >= MIN_POLL_S:
                self._at = now
                try:
                    with self._pool.connection() as raw:
                        row = raw.execute(REPLAY_POSITION).fetchone()
                    if row is not None and row[0] is not None:
                        self._value = max(self._value, int(row[0]))
                except psycopg.Error:
                    pass  # the standby is away: the last position stands; the next poll tries again
            return self._value

    def saw(self, value: int) -> None:
        """A standby commits nothing of its own: nothing to note."""

    def saw_commit(self, number: int) -> None:
        """Never called on a standby (writes refuse before a transaction): nothing to note."""

    def close(self) -> None:
        """Nothing runs in the background."""
