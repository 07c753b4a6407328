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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

import sqlean as sqlite3
import sqlite_vec

from engine.errors import DatabaseDamaged, DiskFull, EngineError, InvalidInput, StoreBusy
from engine.storage import readonly as read_only
from engine.storage.port import Reconciled
from engine.storage.sqlite import identity, room, schema
from engine.storage.sqlite.connection import SqliteConnection
from engine.storage.sqlite.curator import SqliteCuratorReads
from engine.storage.sqlite.decay import SqliteDecayAccess
from engine.storage.sqlite.dump import SqliteDump
from engine.storage.sqlite.eraser import SqliteEraser
from engine.storage.sqlite.feed import VectorChangeLog
from engine.storage.sqlite.health import SqliteHealth
from engine.storage.sqlite.keyword import SqliteKeywordIndex
from engine.storage.sqlite.schema import GENERATION
from engine.storage.sqlite.vector import SqliteVectorStore

T = TypeVar("T")

WRITE_RETRIES = 60  # at least this many tries before StoreBusy ...
WRITE_TIMEOUT_S = 30.0  # ... and at least this long (8 busy writers on 2 cores need > 5 s)
READ_TIMEOUT_S = 10.0  # reads only wait out WAL recovery or a journal-mode change
JITTER_MS = (20, 150)
BUSY_TIMEOUT_MS = 50  # SQLite's own short wait, under our jittered retries

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


def _pause() -> None:
    time.sleep(random.uniform(*JITTER_MS) / 1000)


def retry_busy(fn: Callable[[], T], *, timeout: float | None = None, what: str = "") -> T:
    """Run `fn()` (no open transaction of ours inside), retrying SQLITE_BUSY with jitter.

    Readers in WAL mode block only while another connection recovers the WAL after a crash or
    switches the journal mode; both are short. After `timeout` seconds it is StoreBusy, never a
    raw "database is locked"."""
    timeout = READ_TIMEOUT_S if timeout is None else timeout
    deadline = time.monotonic() + timeout
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise
            if time.monotonic() > deadline:
                raise StoreBusy(
                    f"{what or 'the database'} stayed locked for {timeout:.0f} s ({exc})"
                ) from None
            _pause()


def connect(path: str | os.PathLike, *, readonly: bool = False) -> sqlite3.Connection:
    """Open `path` with sqlite-vec loaded and the house pragmas set. A file that is not ours, or
    is from a newer memconsole, is refused before anything is written (engine/identity.py)."""
    p = Path(path)
    state = identity.OURS
    if readonly:
        if identity.check(p, GENERATION) == identity.NEW:
            raise EngineError(f"{p}: no such database")
        conn = sqlite3.connect(
            identity.uri(p, mode="ro"),
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            factory=SqliteConnection,
        )
    else:
        if p.is_dir():
            raise EngineError(f"{p}: is a directory, not a database file")
        state = identity.check(p, GENERATION)
        try:
            _ensure_private_file(p)
        except OSError as exc:
            raise EngineError(
                f"{p}: cannot create the database ({exc.strerror}"
                f"{'; the folder is read-only' if _ro_error(exc) else ''})"
            ) from None
        old_umask = os.umask(0o077)  # -wal and -shm are born private too
        try:
            conn = sqlite3.connect(
                identity.uri(p),
                uri=True,
                isolation_level=None,
                check_same_thread=False,
                factory=SqliteConnection,
            )
        except sqlite3.Error as exc:  # a directory (`--db ""` is "."), a vanished folder, ...
            raise EngineError(f"{p}: cannot open the database ({exc})") from None
        finally:
            os.umask(old_umask)
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if not readonly:  # needs a lock: several processes may create the file at once
            if state == identity.NEW:  # the marker goes into page 1 before anything else
                retry_busy(lambda: _stamp_new(conn), what=str(p))
            retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone(), what=str(p))
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA secure_delete=ON")
    except StoreBusy:
        conn.close()
        raise
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise (plain_error(exc, p) or EngineError(f"{p}: not a usable SQLite database ({exc})")) from exc
    conn.row_factory = sqlite3.Row
    return conn


def _stamp_new(conn: sqlite3.Connection) -> None:
    if conn.execute("PRAGMA application_id").fetchone()[0] != identity.APP_ID:
        conn.execute(f"PRAGMA application_id = {identity.APP_ID}")


def _ro_error(exc: OSError) -> bool:
    import errno

    return exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)


def bad_value(exc: BaseException) -> InvalidInput | None:
    """A value SQLite cannot bind (lone surrogate, int past 64 bits, list...) is the caller's
    error: say so as InvalidInput instead of leaking the driver's exception."""
    if isinstance(exc, UnicodeEncodeError):
        return InvalidInput("text contains a lone surrogate (not valid Unicode text)")
    if isinstance(exc, OverflowError):
        return InvalidInput(f"a number is out of range ({exc})")
    if isinstance(exc, sqlite3.InterfaceError) and "binding" in str(exc):
        return InvalidInput(f"a value has an unsupported type ({exc})")
    return None


_BIND_ERRORS = (UnicodeEncodeError, OverflowError, sqlite3.InterfaceError)


def plain_error(exc: BaseException, path: Path, *, no_room: bool = False) -> EngineError | None:
    """A full disk or a read-only location is the operator's situation, not a bug: say so in
    one line (the transaction rolled back, so nothing was written). `no_room`: `exc` came of a
    file that could not grow (engine/storage/sqlite/room.py)."""
    msg = str(exc).lower()
    if room.says_full(exc) or no_room:
        return DiskFull(f"{path}: disk full; nothing was written")
    if "readonly" in msg or "read-only" in msg:
        return EngineError(
            f"{path}: the database is read-only (its file or folder may not be "
            f"written); nothing was written ({exc})"
        )
    if "unable to open database file" in msg and not os.access(path.parent, os.W_OK):
        return EngineError(f"{path}: its folder is read-only; nothing was written")
    if "malformed" in msg:
        return DatabaseDamaged(
            f"{path}: the database file is damaged ({exc}); nothing was "
            "written. Run `memconsole doctor` to see where"
        )
    if "disk i/o error" in msg:
        return EngineError(
            f"{path}: the disk reported an I/O error (full or failing?); nothing was written ({exc})"
        )
    return None


def _is_busy(exc: BaseException) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


class Store:
    """A connection shared by the engine's threads (calls are serialized by a lock)."""

    def __init__(self, path: str | os.PathLike, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.conn = connect(path, readonly=readonly)
        self.readonly = readonly  # writes refuse with ReadOnly before trying (engine/storage/readonly.py)
        self.read_only_kind: str | None = read_only.OPENED if readonly else None
        self.lock = threading.RLock()
        self._in_write = False
        self._reading = False  # a reading() block is open (on the thread holding the lock)
        # Called with the connection after each committed write (outside its transaction): the
        # audit chain's head anchor is written there, never for a write that rolled back.
        self.after_commit: list[Callable[[sqlite3.Connection], None]] = []
        self.hook_errors: list[str] = []
        # -- the parts of the port where backends differ (engine/storage/port.py) --
        self.keyword = SqliteKeywordIndex()  # FTS5
        self.vector_store = SqliteVectorStore()  # vec0 (not ctx.vectors: that is the search side)
        self.decay_access = SqliteDecayAccess()
        self.feed = VectorChangeLog()
        self.eraser = SqliteEraser(self)  # erasure and its verification (engine/storage/erasure.py)
        self.health = SqliteHealth(self)  # doctor's checks (engine/storage/health.py)
        self.dump = SqliteDump()  # export / restore (engine/storage/dump.py)
        self.curator = SqliteCuratorReads()  # the curator's bulk vector read

    def reconcile(self) -> Reconciled:
        """Bring the file up to the schema (engine/storage/sqlite/reconcile.py), retrying BUSY."""
        return self.retrying(lambda: schema.reconcile(self.conn))

    def read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        with self.lock:
            return self._retry_read(lambda: self.conn.execute(sql, params).fetchall())

    def read_one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        with self.lock:
            return self._retry_read(lambda: self.conn.execute(sql, params).fetchone())

    def query(self, fn: Callable[[Any], T]) -> T:
        """`fn(conn)` outside a write: each statement reads the newest commit (inside a write or a
        `reading()`, that transaction's snapshot), retried while the file is busy."""
        with self.lock:
            return self._retry_read(lambda: fn(self.conn))

    def _retry_read(self, fn: Callable[[], T]) -> T:
        try:
            # Inside a transaction the snapshot is already held, so BUSY cannot happen there.
            if self.conn.in_transaction:
                return fn()
            return retry_busy(fn, what=str(self.path))
        except _BIND_ERRORS as exc:
            raise (bad_value(exc) or exc) from None
        except sqlite3.DatabaseError as exc:
            raise (plain_error(exc, self.path) or exc) from None

    def retrying(self, fn: Callable[[], T], timeout: float | None = None) -> T:
        """Run `fn()` that opens its own transaction (schema reconcile), retrying BUSY."""
        with self.lock:
            try:
                return retry_busy(
                    fn, timeout=WRITE_TIMEOUT_S if timeout is None else timeout, what=str(self.path)
                )
            except sqlite3.DatabaseError as exc:
                raise (plain_error(exc, self.path) or exc) from None

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """Several reads that must see one snapshot of the file."""
        with self.lock:
            if self._in_write or self._reading:  # inside a write, or a read already open: its snapshot
                yield self.conn
                return
            self.conn.execute("BEGIN")
            self._reading = True
            try:
                # Take the snapshot now, with retries, so the caller's reads never see BUSY.
                self._begin_snapshot()
                yield self.conn
            except _BIND_ERRORS as exc:
                raise (bad_value(exc) or exc) from None
            finally:
                self._reading = False
                self.conn.execute("COMMIT")

    def _begin_snapshot(self) -> None:
        deadline = time.monotonic() + READ_TIMEOUT_S
        while True:
            try:
                self.conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
                return
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise
                if time.monotonic() > deadline:
                    raise StoreBusy(f"{self.path}: stayed locked for reading ({exc})") from None
                _pause()

    @property
    def in_write(self) -> bool:
        """True inside a write (or dry run) on this store: a nested call joins that transaction."""
        return self._in_write

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn(conn)` in one BEGIN IMMEDIATE transaction, retrying lock contention with jitter.

        `fn` may run more than once (after a busy retry), so it must not have side effects outside
        the database. Nested calls join the outer transaction.
        """
        return self._transaction(fn, commit=True)

    def dry_run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn(conn)` exactly as `write` would (same lock, same retries), then roll back.

        The one dry-run mechanism: what `fn` counts is what a real write would have done, and
        nothing of it stays (no after_commit hooks run). Inside a write it rolls back to a
        savepoint, leaving the outer transaction as it was."""
        with self.lock:
            if self._in_write:
                self.conn.execute("SAVEPOINT dry_run")
                try:
                    return fn(self.conn)
                finally:
                    self.conn.execute("ROLLBACK TO dry_run")
                    self.conn.execute("RELEASE dry_run")
            return self._transaction(fn, commit=False)

    def _transaction(self, fn: Callable[[sqlite3.Connection], T], *, commit: bool) -> T:
        with self.lock:
            if self._in_write:
                return fn(self.conn)
            if self.readonly:
                raise read_only.refused(str(self.path), read_only.OPENED)
            last: Exception | None = None
            deadline = time.monotonic() + WRITE_TIMEOUT_S
            tries = 0
            while tries < WRITE_RETRIES or time.monotonic() < deadline:
                tries += 1
                try:
                    self.conn.execute("BEGIN IMMEDIATE")
                except sqlite3.OperationalError as exc:
                    if not _is_busy(exc):
                        raise (plain_error(exc, self.path) or exc) from None
                    last = exc
                    _pause()
                    continue
                self._in_write = True
                try:
                    result = fn(self.conn)
                    if not commit:
                        self.conn.execute("ROLLBACK")
                        return result
                    self.conn.execute("COMMIT")
                    self._in_write = False
                    self._run_after_commit()
                    return result
                except sqlite3.OperationalError as exc:
                    no_room = room.full(self.conn, exc, self.path)  # before the rollback frees pages
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    if not _is_busy(exc):
                        raise (plain_error(exc, self.path, no_room=no_room) or exc) from None
                    last = exc
                    _pause()
                except BaseException as exc:
                    no_room = isinstance(exc, sqlite3.DatabaseError) and room.full(self.conn, exc, self.path)
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    plain: EngineError | None = bad_value(exc) if isinstance(exc, _BIND_ERRORS) else None
                    if isinstance(exc, sqlite3.DatabaseError):
                        plain = plain_error(exc, self.path, no_room=no_room)
                    if plain is not None:
                        raise plain from None
                    raise
                finally:
                    self._in_write = False
            raise StoreBusy(
                f"{self.path}: the database stayed locked by other writers through "
                f"{tries} tries in {WRITE_TIMEOUT_S:.0f} s ({last})"
            )

    def _run_after_commit(self) -> None:
        """The write is committed: a failing hook must not make the caller retry it."""
        for hook in self.after_commit:
            try:
                hook(self.conn)
            except Exception as exc:  # noqa: BLE001 - recorded for doctor, never re-raised
                self.hook_errors.append(f"{getattr(hook, '__name__', hook)}: {exc}")

    def data_version(self) -> int:
        """Changes when another connection commits (cheap poll for live refresh)."""
        with self.lock:
            return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def close(self) -> None:
        with self.lock, suppress(sqlite3.Error):
            self.conn.close()
