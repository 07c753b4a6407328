"""The connection a read or write function receives on PostgreSQL, carrying the gateways and read
models. `run` / `run_many` take PostgreSQL's own SQL (`%s` / `%(name)s`): what every part of this
adapter runs. `execute` / `executemany` still take the services' SQLite-flavoured SQL (`?` /
`:name`, translated by sqlmap.py) while services move to the gateways. Rows are addressable by index
and name (rows.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from engine.errors import EngineError, InvalidInput
from engine.storage.postgres.gateways import Gateways
from engine.storage.postgres.sqlmap import translate


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


class _Empty:
    """The result of a statement that has no PostgreSQL meaning here (the list of database files)."""

    rowcount = 0
    description = None

    def fetchone(self) -> Any:
        return None

    def fetchall(self) -> list[Any]:
        return []

    def fetchmany(self, size: int = 0) -> list[Any]:
        return []

    def __iter__(self) -> Iterator[Any]:
        return iter(())


class PgConnection(Gateways):
    """Wraps one psycopg connection for the duration of a read or write; carries the gateways."""

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw

    def run(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """PostgreSQL's own SQL (`%s` / `%(name)s` placeholders, a literal % written %%): what
        the gateways, read models and adapter parts run. Driver errors become one-line ones."""
        try:
            return self.raw.execute(sql, params or None)
        except (UnicodeEncodeError, OverflowError) as exc:
            raise InvalidInput(f"a value cannot be stored ({exc})") from None
        except psycopg.errors.NumericValueOutOfRange as exc:
            raise InvalidInput(f"a number is out of range ({exc})") from None

    def run_many(self, sql: str, params: Iterable[Sequence[Any] | dict[str, Any]]) -> psycopg.Cursor[Any]:
        """`run` for each parameter set (PostgreSQL's own SQL)."""
        cur = self.raw.cursor()
        cur.executemany(sql, list(params))
        return cur

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        words = sql.lower().split()
        if words and words[0] == "pragma":  # SQLite's own statements
            if words == ["pragma", "database_list"]:
                return _Empty()  # a server database has no file: the audit anchor goes by its id
            raise unsupported(f"SQLite's {' '.join(sql.split())[:60]!r}")
        text, named = translate(sql)
        # A services' dict may carry keys a statement does not use (or none at all).
        args: Any = dict(params) if named else ([] if isinstance(params, dict) else list(params or ()))
        try:
            return self.raw.execute(text, args)
        except (UnicodeEncodeError, OverflowError) as exc:
            raise InvalidInput(f"a value cannot be stored ({exc})") from None
        except psycopg.errors.UndefinedFunction as exc:
            raise unsupported(f"a SQL function ({str(exc).splitlines()[0]})") from None
        except psycopg.errors.NumericValueOutOfRange as exc:
            raise InvalidInput(f"a number is out of range ({exc})") from None
        except (psycopg.ProgrammingError, psycopg.DataError) as exc:
            # SQL that PostgreSQL reads differently from SQLite (a type, a function, a construct
            # this slice has not bridged): say which, never a driver traceback.
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise unsupported(f"this statement ({first}): {' '.join(sql.split())[:120]}") from None

    def executemany(self, sql: str, params: Any) -> Any:
        text, named = translate(sql)
        rows = [dict(p) if named else list(p) for p in params]
        cur = self.raw.cursor()
        cur.executemany(text, rows)
        return cur

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE


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

    def run(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """PostgreSQL's own SQL (`%s` placeholders), as `PgConnection.run`."""
        conn = self._current()
        if conn is not None:
            return conn.run(sql, params)
        with self._pool.connection() as raw:
            cur = PgConnection(raw).run(sql, params)
            rows = cur.fetchall() if cur.description is not None else []
            return _Fetched(rows, cur.rowcount, cur.description)

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
