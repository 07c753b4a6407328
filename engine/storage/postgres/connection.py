"""The connection a read or write function receives on PostgreSQL, carrying the gateways and read
models. `execute` / `executemany` take PostgreSQL's own SQL (`%s` / `%(name)s` placeholders, a literal
`%` written `%%`): what the gateways, read models and the adapter's parts run; nothing is translated.
Rows are addressable by index and name (rows.py: the port's Row)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import psycopg
from psycopg_pool import ConnectionPool

from engine.errors import EngineError, InvalidInput
from engine.storage.postgres.bindings import Gateways
from engine.storage.postgres.text_queue import may_queue_text

if TYPE_CHECKING:
    from engine.storage.port import Connection


# A pooler in transaction mode that pooler.py could not recognise lost a prepared statement.
POOLER_PREPARED = (
    "a prepared statement was lost between transactions (a connection pooler in transaction mode?):"
    " set [postgres] prepared_statements = false, or connect to the server itself"
)


def unsupported(what: str) -> EngineError:
    return EngineError(f"not supported on PostgreSQL yet: {what}")


class NotYet:
    """A part of the port not built on PostgreSQL yet: every use says so (a clear EngineError
    instead of a traceback or a silently wrong answer)."""

    errors: tuple[type[BaseException], ...] = ()
    dimensions = 384
    generation = 0
    embed_dim = 384
    error: type[Exception] = Exception

    def __init__(self, what: str) -> None:
        self._what = what

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise unsupported(f"{self._what} ({name})")

        return refuse


class PgConnection(Gateways):
    """Wraps one psycopg connection for the duration of a read or write; carries the gateways.

    Statements whose answer nobody reads (a transaction's BEGIN, an access update) can wait with
    `later`: they go in one pipeline with the next statement (one round trip for all; psycopg's
    pipeline mode, which PgBouncer's transaction pooling passes through: every message of it is in
    the one transaction). Anything that reaches the driver connection (`raw`) sends them first, so
    the server always runs statements in the order they were asked for."""

    # Inside `store.reading()` (one REPEATABLE READ, READ ONLY snapshot): answers that cannot change
    # before it ends, kept so a recall asks once (feed.py's head). None elsewhere: every read asks.
    snapshot: dict[str, Any] | None = None

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self._raw = raw
        self._later: list[tuple[str, Sequence[Any] | None]] = []
        # May `fts_pending` hold rows of this transaction? (text_queue.py; the store skips the
        # keyword upkeep's DELETE when not.) True unless the store says the transaction is new.
        self.text_queued = True

    @property
    def raw(self) -> psycopg.Connection[Any]:
        """The driver's connection, after what waits has been sent (COPY, cursors, psycopg.sql;
        and what this adapter cannot see into, so it may have queued text)."""
        self.text_queued = True
        self.flush()
        return self._raw

    @property
    def backend_pid(self) -> int:
        """The server process of this connection (known without a round trip or a flush)."""
        return int(self._raw.info.backend_pid)

    def later(self, sql: str, params: Sequence[Any] | None = None) -> None:
        """Send `sql` with the next statement; its answer is never read (errors surface there)."""
        if not self.text_queued and may_queue_text(sql):
            self.text_queued = True
        self._later.append((sql, params))

    def drop_later(self) -> bool:
        """Forget what waits (a snapshot nobody read from); whether anything did."""
        had, self._later = bool(self._later), []
        return had

    def flush(self) -> None:
        if self._later:
            later, self._later = self._later, []
            with self._raw.pipeline():
                for q, p in later:
                    self._raw.execute(q, p)

    def _run(self, sql: str, params: Any) -> Any:
        if not self._later:
            return self._raw.execute(sql, params)
        later, self._later = self._later, []
        with self._raw.pipeline():  # one round trip: what waited, then this
            for q, p in later:
                self._raw.execute(q, p)
            cur = self._raw.execute(sql, params)
        return cur

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        """PostgreSQL's own SQL. Driver errors become one-line ones (never a traceback)."""
        if not self.text_queued and may_queue_text(sql):
            self.text_queued = True
        try:
            return self._run(sql, params or None)
        except (UnicodeEncodeError, OverflowError) as exc:
            raise InvalidInput(f"a value cannot be stored ({exc})") from None
        except psycopg.errors.NumericValueOutOfRange as exc:
            raise InvalidInput(f"a number is out of range ({exc})") from None
        except psycopg.errors.UndefinedFunction as exc:
            raise unsupported(f"a SQL function ({str(exc).splitlines()[0]})") from None
        except (psycopg.errors.DuplicatePreparedStatement, psycopg.errors.InvalidSqlStatementName):
            raise EngineError(POOLER_PREPARED) from None
        except (psycopg.ProgrammingError, psycopg.DataError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            text = sql if isinstance(sql, str) else repr(sql)  # psycopg.sql.Composed in DDL
            raise unsupported(f"this statement ({first}): {' '.join(text.split())[:120]}") from None

    def executemany(self, sql: str, params: Iterable[Sequence[Any] | Mapping[str, Any]]) -> Any:
        """`execute` for each parameter set."""
        if not self.text_queued and may_queue_text(sql):
            self.text_queued = True
        self.flush()
        cur = self._raw.cursor()
        try:
            cur.executemany(sql, list(params))
        except (UnicodeEncodeError, OverflowError) as exc:
            raise InvalidInput(f"a value cannot be stored ({exc})") from None
        return cur

    @property
    def in_transaction(self) -> bool:
        return bool(self._later) or self._raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE


def raw_of(conn: Connection) -> psycopg.Connection[Any]:
    """The driver connection under the port's Connection: every connection this adapter hands to
    its parts is a PgConnection (COPY, cursors and psycopg.sql need the driver's own)."""
    return cast(PgConnection, conn).raw


class _Fetched:
    """A statement's result already read, so its pool connection could go back."""

    def __init__(self, rows: list[Any], rowcount: int, description: Any) -> None:
        self._rows, self.rowcount, self.description = rows, rowcount, description

    def fetchone(self) -> Any:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[Any]:
        rows, self._rows = self._rows, []
        return rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class DirectConnection:
    """`store.conn` as on SQLite: one statement at a time in autocommit, outside the engine's writes
    (no writers' lock, no change counter); inside this thread's write it is that write's connection.
    What tools and tests use to look at or tamper with rows directly."""

    def __init__(self, pool: ConnectionPool[Any], current: Callable[[], PgConnection | None]) -> None:
        self._pool, self._current = pool, current

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        conn = self._current()
        if conn is not None:
            return conn.execute(sql, params)
        with self._pool.connection() as raw:
            cur = PgConnection(raw).execute(sql, params)
            rows = cur.fetchall() if cur.description is not None else []
            return _Fetched(rows, cur.rowcount, cur.description)

    def executemany(self, sql: str, params: Any) -> Any:
        conn = self._current()
        if conn is not None:
            return conn.executemany(sql, params)
        with self._pool.connection() as raw:
            cur = PgConnection(raw).executemany(sql, params)
            return _Fetched([], cur.rowcount, None)

    @property
    def in_transaction(self) -> bool:
        return self._current() is not None
