"""The one way to open a memory database, and the one way to write to it.

sqlean is a drop-in sqlite3 whose build can load extensions (this Python's stdlib one cannot),
so sqlite-vec loads through it. Writers take the lock up front (BEGIN IMMEDIATE) and retry
"locked"/"busy" after a random pause, so many agent processes and the console share the file
without convoys; WAL keeps readers from ever blocking them.
"""
from __future__ import annotations

import os
import random
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import sqlean as sqlite3
import sqlite_vec

from .errors import EngineError, StoreBusy

T = TypeVar("T")

WRITE_RETRIES = 60          # × 20–150 ms ≈ 5 s of patience before StoreBusy
JITTER_MS = (20, 150)
BUSY_TIMEOUT_MS = 50        # SQLite's own short wait, under our jittered retries

Error = sqlite3.Error
OperationalError = sqlite3.OperationalError
IntegrityError = sqlite3.IntegrityError


def _ensure_private_file(path: Path) -> None:
    """A new database file is created 0600 (in a 0700 folder) before SQLite ever sees it."""
    if path.exists():
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)


def connect(path: str | os.PathLike, *, readonly: bool = False) -> sqlite3.Connection:
    """Open `path` with sqlite-vec loaded and the house pragmas set."""
    p = Path(path)
    if readonly:
        uri = f"file:{p.resolve()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    else:
        _ensure_private_file(p)
        old_umask = os.umask(0o077)   # -wal and -shm are born private too
        try:
            conn = sqlite3.connect(str(p), isolation_level=None, check_same_thread=False)
        finally:
            os.umask(old_umask)
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if not readonly:
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA secure_delete=ON")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise EngineError(f"{p}: not a usable SQLite database ({exc})") from exc
    conn.row_factory = sqlite3.Row
    return conn


def _is_busy(exc: BaseException) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


class Store:
    """A connection shared by the engine's threads (calls are serialized by a lock)."""

    def __init__(self, path: str | os.PathLike, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.conn = connect(path, readonly=readonly)
        self.lock = threading.RLock()
        self._in_write = False

    def read(self, sql: str, params: tuple | dict = ()) -> list:
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def read_one(self, sql: str, params: tuple | dict = ()):
        with self.lock:
            return self.conn.execute(sql, params).fetchone()

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """Several reads that must see one snapshot of the file."""
        with self.lock:
            if self._in_write:
                yield self.conn
                return
            self.conn.execute("BEGIN")
            try:
                yield self.conn
            finally:
                self.conn.execute("COMMIT")

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn(conn)` in one BEGIN IMMEDIATE transaction, retrying lock contention with jitter.

        `fn` may run more than once (after a busy retry), so it must not have side effects outside
        the database. Nested calls join the outer transaction.
        """
        with self.lock:
            if self._in_write:
                return fn(self.conn)
            last: Exception | None = None
            for _ in range(WRITE_RETRIES):
                try:
                    self.conn.execute("BEGIN IMMEDIATE")
                except sqlite3.OperationalError as exc:
                    if not _is_busy(exc):
                        raise
                    last = exc
                    time.sleep(random.uniform(*JITTER_MS) / 1000)
                    continue
                self._in_write = True
                try:
                    result = fn(self.conn)
                    self.conn.execute("COMMIT")
                    return result
                except sqlite3.OperationalError as exc:
                    self.conn.execute("ROLLBACK") if self.conn.in_transaction else None
                    if not _is_busy(exc):
                        raise
                    last = exc
                    time.sleep(random.uniform(*JITTER_MS) / 1000)
                except BaseException:
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    raise
                finally:
                    self._in_write = False
            raise StoreBusy(
                f"{self.path}: the database stayed locked by other writers through "
                f"{WRITE_RETRIES} retries ({last})"
            )

    def data_version(self) -> int:
        """Changes when another connection commits (cheap poll for live refresh)."""
        with self.lock:
            return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def close(self) -> None:
        with self.lock:
            try:
                self.conn.close()
            except sqlite3.Error:
                pass
