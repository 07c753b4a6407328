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

if TYPE_CHECKING:
    from engine.storage.port import Connection


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
    """Wraps one psycopg connection for the duration of a read or write; carries the gateways."""

    # Inside `store.reading()` (one REPEATABLE READ, READ ONLY snapshot): answers that cannot change
    # before it ends, kept so a recall asks once (feed.py's head). None elsewhere: every read asks.
    snapshot: dict[str, Any] | None = None

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        """PostgreSQL's own SQL. Driver errors become one-line ones (never a traceback)."""
        try:
            return self.raw.execute(sql, params or None)
        except (UnicodeEncodeError, OverflowError) as exc:
            raise InvalidInput(f"a value cannot be stored ({exc})") from None
        except psycopg.errors.NumericValueOutOfRange as exc:
            raise InvalidInput(f"a number is out of range ({exc})") from None
        except psycopg.errors.UndefinedFunction as exc:
            raise unsupported(f"a SQL function ({str(exc).splitlines()[0]})") from None
        except (psycopg.ProgrammingError, psycopg.DataError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            text = sql if isinstance(sql, str) else repr(sql)  # psycopg.sql.Composed in DDL
            raise unsupported(f"this statement ({first}): {' '.join(text.split())[:120]}") from None

    def executemany(self, sql: str, params: Iterable[Sequence[Any] | Mapping[str, Any]]) -> Any:
        """`execute` for each parameter set."""
        cur = self.raw.cursor()
        try:
            cur.executemany(sql, list(params))
        except (UnicodeEncodeError, OverflowError) as exc:
            raise InvalidInput(f"a value cannot be stored ({exc})") from None
        return cur

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE


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
