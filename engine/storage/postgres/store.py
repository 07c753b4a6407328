"""The PostgreSQL store: the storage port (engine/storage/port.py) over psycopg 3 and a pool.

- Writes run concurrently: `fn(conn)` in one READ COMMITTED transaction with no global lock.
  What must be exclusive is held by row locks, constraints and narrow transaction locks taken by
  the part that needs them (the gateways: one agent's dedup, the audit chain's head; here: the
  change feed's order, below). Serialization failures, deadlocks and lock timeouts are retried
  after a jittered pause; past the same patience as SQLite it is `StoreBusy`, never the driver's
  error.
- Before commit the keyword index tokenizes the rows the write touched (`fts_pending`); the
  write's change-feed entries (queued by triggers in `vector_changes_pending`) are moved into
  `vector_changes` under the feed's own transaction lock, held only from that move to the commit,
  so feed positions are in commit order (a reader that saw position n never misses one below it);
  and a write that changed anything NOTIFYs `memconsole` with the next number of a sequence. No
  row is updated by every write: live views follow the notifications and the sequence (listen.py).
- Reads run on a pool connection (autocommit); `reading()` holds one REPEATABLE READ snapshot; a
  read inside this thread's write sees that write.
- No session state outlives a transaction (SET LOCAL only, advisory locks are transaction-level):
  a pooler in transaction mode (PgBouncer pool_mode=transaction) can sit in front; only the
  listener (listen.py) needs a session connection of its own. A pooler is recognised at opening
  (pooler.py): then no prepared statements and no LISTEN (live views poll the change sequence).
- Statements whose answer nobody reads wait and go in one psycopg pipeline with the next one (a
  snapshot's or a write's BEGIN, a recall's access update: connection.py); a write whose
  statements queued no text skips the keyword upkeep (text_queue.py). Pipelines stay inside one
  transaction, so a transaction-mode pooler passes them through.
- Opening (opening.py) refuses a database that is not memconsole's, or from a newer generation,
  before writing, and a server without pgvector.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar, cast

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from engine.config import load_settings
from engine.errors import DiskFull, EngineError, StoreBusy
from engine.storage import readonly as read_only
from engine.storage.port import Connection, Reconciled
from engine.storage.postgres import audit, trigram_index
from engine.storage.postgres.connection import POOLER_PREPARED, DirectConnection, PgConnection, raw_of
from engine.storage.postgres.curator import PgCuratorReads
from engine.storage.postgres.decay import PgDecayAccess
from engine.storage.postgres.dump import PgDump
from engine.storage.postgres.eraser import PgEraser
from engine.storage.postgres.feed import VectorChangeLog
from engine.storage.postgres.health import PgHealth
from engine.storage.postgres.keyword import PgKeywordIndex
from engine.storage.postgres.keyword_upkeep import tokenize_pending
from engine.storage.postgres.listen import ChangeListener
from engine.storage.postgres.opening import (
    ITERATIVE_SCAN,
    identity,
    install_vector,
    reconcile_schema,
    shown,
    version_of,
)
from engine.storage.postgres.pooler import PolledCounter, behind_pooler, check_transactions
from engine.storage.postgres.rows import row_factory
from engine.storage.postgres.standby import ReplayPoller, read_only_kind
from engine.storage.postgres.vector import PgVectorStore
from engine.storage.postgres.write_tx import (  # noqa: F401 - CHANNEL, COUNTER_SQL: public names here too
    CHANNEL,
    COMMIT_SQL,
    COUNTER_SQL,
    JITTER_MS,
    RETRYABLE,
    WRITE_RETRIES,
    WRITE_TIMEOUT_S,
    begin_write,
)

T = TypeVar("T")


def _end(conn: PgConnection, raw: psycopg.Connection[Any]) -> None:
    """Roll back a snapshot or a dry run; nothing to send when its BEGIN never went."""
    conn.drop_later()
    if raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        raw.execute("ROLLBACK")


class PgStore:
    """One PostgreSQL database shared by any number of processes on any number of machines."""

    def __init__(self, url: str, *, readonly: bool = False, pool_size: int | None = None) -> None:
        self.url = url
        self.path = Path(shown(url))  # no file: nothing exists there (the vector matrix stays off)
        self.readonly = readonly
        # Why writes are refused (engine/storage/readonly.py): asked for, or found by _check_server
        # (a standby, or a server that makes this role's transactions read-only).
        self.read_only_kind: str | None = read_only.OPENED if readonly else None
        self._iterative = False  # pgvector >= 0.8 (set by _check_server)
        self.pooled = False  # a pooler (PgBouncer) in front: no session state at all (pooler.py)
        self.after_commit: list[Callable[[PgConnection], None]] = []
        self.hook_errors: list[str] = []
        self._local = threading.local()
        self._check_server()
        settings = load_settings()
        audit.PARTITIONS = settings.postgres.audit_partitions  # the audit chains appends spread over
        # No server-side prepared statements where a transaction-mode pooler cannot keep them.
        # Nor behind a pooler, whatever the setting says (pooler.py).
        prepared = settings.postgres.prepared_statements and not self.pooled
        prepare: dict[str, Any] = {} if prepared else {"prepare_threshold": None}
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size or settings.postgres.pool_size,
            kwargs={"autocommit": True, **prepare},
            configure=self._configure,
            open=False,
        )
        try:
            self.pool.open(wait=True, timeout=10)
        except Exception as exc:
            raise EngineError(f"{shown(url)}: cannot open a connection pool ({exc})") from None
        # -- the parts of the port --
        self.keyword = PgKeywordIndex(self._sync_if_writing)
        search = settings.search
        self.vector_store = PgVectorStore(
            self.reading,
            exact_below=search.pg_exact_below,
            ef_search=search.pg_ef_search,
            hnsw=self._iterative,
        )
        self.decay_access = PgDecayAccess()
        self.feed = VectorChangeLog()
        self.eraser = PgEraser(self)
        self.health = PgHealth(self)
        self.dump = PgDump()
        self.curator = PgCuratorReads()
        # A standby refuses LISTEN and sends no NOTIFY: its live views poll its replay position.
        # Behind a pooler LISTEN would land on a shared server connection: they poll the sequence.
        self.listener: ChangeListener | ReplayPoller = (
            ReplayPoller(self.pool)
            if self.standby
            else PolledCounter(self._read_counter, COUNTER_SQL)
            if self.pooled
            else ChangeListener(url, CHANNEL, self._read_counter, COUNTER_SQL)  # started by data_version()
        )

    @property
    def standby(self) -> bool:
        """A streaming replica (in recovery): read-only, its live views follow the replay position."""
        return self.read_only_kind == read_only.STANDBY

    # -- opening ------------------------------------------------------------------------------------
    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        register_vector(conn)
        conn.row_factory = row_factory
        # No SET here: session state would not survive a transaction-mode pooler (vector.py sets
        # the HNSW scan's parameters with SET LOCAL inside the query's transaction).

    def _check_server(self) -> None:
        """Refuse, before writing anything: no pgvector, a database that is not ours, a newer one."""
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise EngineError(f"{shown(self.url)}: cannot connect ({str(exc).strip()})") from None
        try:
            have = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
            if have is None:
                raise EngineError(
                    f"{shown(self.url)}: the server has no pgvector (the 'vector' extension); "
                    "install it, or use a SQLite file"
                )
            identity(self.url, conn)
            self.pooled = behind_pooler(conn)
            found = read_only_kind(conn)
            if found is not None:  # the server's word beats the caller's: a standby says so
                self.readonly, self.read_only_kind = True, found
            if not self.readonly:
                install_vector(self.url, conn)
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            self._iterative = row is not None and version_of(row[0]) >= ITERATIVE_SCAN
            if self.pooled:  # last: a statement-mode pooler drops the connection as it refuses
                check_transactions(shown(self.url), conn)
        except psycopg.Error as exc:
            raise EngineError(f"{shown(self.url)}: {str(exc).strip()}") from None
        finally:
            conn.close()

    def reconcile(self) -> Reconciled:
        """Create what is missing, add missing columns, record the generation (one transaction,
        under the writers' lock). Never drops data. Then the pg_trgm indexes, where they can be."""
        out = reconcile_schema(self.url, self.pool, self.readonly, self.read_only_kind)
        if not self.readonly and not self.pooled:  # its build holds a session lock (pooler.py)
            with self.pool.connection() as raw:
                trigram_index.ensure(raw)
        return out

    # -- reads ----------------------------------------------------------------------------------------
    @property
    def conn(self) -> DirectConnection:
        """Statements outside the engine's writes, as the SQLite store's `conn` (tools, tests)."""
        return DirectConnection(self.pool, self._current)

    def _current(self) -> PgConnection | None:
        return getattr(self._local, "conn", None)

    def read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        conn = self._current()
        if conn is not None:
            return list(conn.execute(sql, params).fetchall())
        with self._plain_errors(), self.pool.connection() as raw:
            return list(PgConnection(raw).execute(sql, params).fetchall())

    def read_one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        conn = self._current()
        if conn is not None:
            return conn.execute(sql, params).fetchone()
        with self._plain_errors(), self.pool.connection() as raw:
            return PgConnection(raw).execute(sql, params).fetchone()

    def query(self, fn: Callable[[Connection], T]) -> T:
        """`fn(conn)` outside a write: in autocommit on a pooled connection (each statement reads
        the newest commit), or inside this thread's write or `reading()`, on its snapshot."""
        conn = self._current()
        if conn is not None:
            return fn(conn)
        with self._plain_errors(), self.pool.connection() as raw:
            return fn(PgConnection(raw))

    @contextmanager
    def reading(self) -> Iterator[PgConnection]:
        """Several reads that see one snapshot."""
        conn = self._current()
        if conn is not None:
            yield conn
            return
        with self._plain_errors(), self.pool.connection() as raw:
            self._local.conn = conn = PgConnection(raw)
            conn.later("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")  # sent with the first read
            conn.snapshot = {}  # one snapshot: its reads may be remembered until it ends (feed.py)
            try:
                yield conn
            finally:
                self._local.conn = None
                _end(conn, raw)

    @contextmanager
    def _plain_errors(self) -> Iterator[None]:
        try:
            yield
        except psycopg.errors.ReadOnlySqlTransaction:  # became a standby, or made read-only, since opening
            raise read_only.refused(
                shown(self.url), read_only.STANDBY if self._in_recovery() else read_only.SESSION
            ) from None
        except (psycopg.errors.DuplicatePreparedStatement, psycopg.errors.InvalidSqlStatementName):
            raise EngineError(POOLER_PREPARED) from None  # an unrecognised pooler (pooler.py)
        except psycopg.errors.DiskFull:  # the server's disk: its write rolled back
            raise DiskFull(f"{shown(self.url)}: disk full on the server; nothing was written") from None
        except psycopg.OperationalError as exc:
            raise EngineError(f"{shown(self.url)}: {str(exc).strip()}") from None

    def _in_recovery(self) -> bool:
        with suppress(Exception), self.pool.connection() as raw:
            return read_only_kind(raw) == read_only.STANDBY
        return False

    # -- writes ---------------------------------------------------------------------------------------
    @property
    def in_write(self) -> bool:
        return bool(getattr(self._local, "writing", False))

    def write(self, fn: Callable[[Connection], T]) -> T:
        return self._transaction(fn, commit=True)

    def dry_run(self, fn: Callable[[Connection], T]) -> T:
        conn = self._current()
        if self.in_write and conn is not None:
            conn.raw.execute("SAVEPOINT dry_run")
            try:
                return fn(conn)
            finally:
                conn.raw.execute("ROLLBACK TO SAVEPOINT dry_run")
                conn.raw.execute("RELEASE SAVEPOINT dry_run")
        return self._transaction(fn, commit=False)

    def _transaction(self, fn: Callable[[Connection], T], *, commit: bool) -> T:
        if self.in_write:
            return fn(self._local.conn)
        if self.readonly:  # refused before trying: nothing half-happens
            raise read_only.refused(shown(self.url), self.read_only_kind or read_only.OPENED)
        last: Exception | None = None
        deadline = time.monotonic() + WRITE_TIMEOUT_S
        tries = 0
        while tries < WRITE_RETRIES or time.monotonic() < deadline:
            tries += 1
            with self._plain_errors(), self.pool.connection() as raw:
                conn = PgConnection(raw)
                try:
                    # Sent in one pipeline with the write's first statement (no round trip of its own).
                    for stmt in begin_write():
                        conn.later(stmt)
                    conn.text_queued = False  # a new transaction has queued no text (text_queue.py)
                    self._local.conn, self._local.writing = conn, True
                    result = fn(conn)
                    self._sync(conn)
                    if not commit:
                        _end(conn, raw)
                        return result
                    # One round trip ends it (the tail every write pays, with the audit chain's
                    # lock held): the change number and NOTIFY, the feed's move, COMMIT.
                    conn.flush()
                    at = raw.execute(COMMIT_SQL).fetchone()
                    if at:  # this process's own commit: known without waiting
                        self.listener.saw_commit(int(at[0]))
                except RETRYABLE as exc:
                    raw.rollback()
                    last = exc
                    self._pause()
                    continue
                except BaseException:
                    with suppress(psycopg.Error):
                        raw.rollback()
                    raise
                finally:
                    self._local.conn, self._local.writing = None, False
                self._run_after_commit(conn)
                return result
        raise StoreBusy(
            f"{shown(self.url)}: the database stayed locked by other writers through "
            f"{tries} tries in {WRITE_TIMEOUT_S:.0f} s ({last})"
        )

    @staticmethod
    def _pause() -> None:
        time.sleep(random.uniform(*JITTER_MS) / 1000)

    def _run_after_commit(self, conn: PgConnection) -> None:
        for hook in self.after_commit:
            try:
                hook(conn)
            except Exception as exc:  # noqa: BLE001 - recorded for doctor, never re-raised
                self.hook_errors.append(f"{getattr(hook, '__name__', hook)}: {exc}")

    # -- the keyword index's upkeep -----------------------------------------------------------------
    def _sync_if_writing(self, conn: Connection) -> None:
        current = self._current()
        if self.in_write and current is not None and conn is current:
            self._sync(current)

    def _sync(self, conn: Connection) -> None:
        """Tokenize the rows this write touched into the keyword index (inside the write); none
        when no statement of it could have queued text (text_queue.py: a recall's write)."""
        pg = cast(PgConnection, conn)
        if pg.text_queued:
            tokenize_pending(raw_of(conn))
            pg.text_queued = False

    # -- the change counter ---------------------------------------------------------------------------
    def data_version(self) -> int:
        """Moves when anyone commits: kept in memory by LISTEN/NOTIFY (listen.py), else read from
        the change sequence."""
        return self.listener.current()

    def _read_counter(self) -> int:
        try:
            with self.pool.connection() as raw:
                row = raw.execute(COUNTER_SQL).fetchone()
        except psycopg.Error:
            return 0
        return int(row[0]) if row else 0

    def close(self) -> None:
        self.listener.close()
        with suppress(Exception):
            self.pool.close()
