"""Tests' own SQL, run straight on either backend: `direct(store).one("SELECT ...", (x,))`.

Tests look at and tamper with rows directly (a count, an edited audit row, a forged meta key). They
write that SQL once, SQLite-flavoured (`?` / `:name` placeholders, a bare `user` column, `LIKE`
meaning ASCII-case-insensitive). On SQLite it runs as given; on PostgreSQL `pg_sql` below rewrites
it into PostgreSQL's own SQL and it runs on the store's raw pooled connection (autocommit), or, inside
this thread's write or `reading()`, on that transaction's connection. Nothing here goes through the
engine's services or relies on the PostgreSQL adapter's bridges (no emulated SQLite functions): a
statement that needs a function SQLite and PostgreSQL spell differently (json_extract, instr, ...)
is written per backend in the test (`if d.postgres: ... else: ...`).

`direct(x)` takes a store (`eng.store`), an engine, or the connection a `store.write(fn)` /
`store.reading()` gives.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_WORD_CHARS = _WORD_START | frozenset("0123456789$")

Params = Sequence[Any] | dict[str, Any]


@lru_cache(maxsize=1024)
def pg_sql(sql: str) -> tuple[str, bool]:
    """A test's SQLite-flavoured statement as PostgreSQL's own SQL: (text, uses named parameters).

    One pass over the text, leaving string literals, quoted identifiers and comments alone (a `?`
    inside `'...'` stays a question mark): `?` → `%s`, `:name` → `%(name)s`, every literal `%`
    doubled, the column `user` quoted (bare, PostgreSQL reads CURRENT_USER), `LIKE` → `ILIKE`
    (SQLite's LIKE ignores ASCII case, PostgreSQL's does not)."""
    out: list[str] = []
    named = False
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c == "'" or c == '"':  # a literal or a quoted identifier: copied, only % doubled
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:  # '' inside a literal
                        j += 2
                        continue
                    break
                j += 1
            out.append(sql[i : j + 1].replace("%", "%%"))
            i = j + 1
        elif c == "-" and sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j
            out.append(sql[i:j].replace("%", "%%"))
            i = j
        elif c == "?":
            out.append("%s")
            i += 1
        elif c == "%":
            out.append("%%")
            i += 1
        elif c == ":" and i + 1 < n and sql[i + 1] in _WORD_START and (i == 0 or sql[i - 1] != ":"):
            j = i + 1
            while j < n and sql[j] in _WORD_CHARS:
                j += 1
            out.append(f"%({sql[i + 1 : j]})s")
            named = True
            i = j
        elif c == ":" and i + 1 < n and sql[i + 1] == ":":  # a cast
            out.append("::")
            i += 2
        elif c in _WORD_START and (i == 0 or sql[i - 1] not in _WORD_CHARS):
            j = i + 1
            while j < n and sql[j] in _WORD_CHARS:
                j += 1
            word = sql[i:j]
            low = word.lower()
            if low == "user":
                out.append('"user"')
            elif low == "like":
                out.append("ILIKE")
            else:
                out.append(word)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out), named


def _pg_args(params: Params, named: bool) -> Any:
    if named:
        return dict(params)  # type: ignore[arg-type]
    return [] if isinstance(params, dict) else list(params or ())


class _Fetched:
    """A PostgreSQL statement's result already read, so its pool connection could go back."""

    def __init__(self, rows: list[Any], rowcount: int, description: Any) -> None:
        self._rows, self.rowcount, self.description = rows, rowcount, description

    def fetchone(self) -> Any:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[Any]:
        rows, self._rows = self._rows, []
        return rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class Direct:
    """`execute` (a cursor-like result: fetchone / fetchall / rowcount / iteration), `executemany`,
    `all` (every row) and `one` (the first row or None) on one backend."""

    def __init__(self, target: Any) -> None:
        store = getattr(target, "store", None)
        if store is not None and hasattr(store, "write"):  # an engine
            target = store
        self._store: Any = None  # a store (statements outside a transaction) ...
        self._conn: Any = None  # ... or one transaction's connection
        if hasattr(target, "write"):
            self._store = target
            self.postgres = hasattr(target, "pool")
        else:
            self._conn = target
            self.postgres = hasattr(target, "raw")
        self.backend = "postgres" if self.postgres else "sqlite"

    # -- PostgreSQL -----------------------------------------------------------------------------------
    def _pg_raw_conn(self) -> Any:
        """The psycopg connection of this thread's write or reading, if there is one."""
        if self._conn is not None:
            return self._conn.raw
        current = self._store._current()
        return None if current is None else current.raw

    def _pg(self, sql: str, params: Params, many: bool = False, rewrite: bool = True) -> Any:
        text, named = pg_sql(sql) if rewrite else (sql, isinstance(params, dict))
        raw = self._pg_raw_conn()
        if raw is not None:
            if many:
                cur = raw.cursor()
                cur.executemany(text, [_pg_args(p, named) for p in params])
                return cur
            return raw.execute(text, _pg_args(params, named))
        with self._store.pool.connection() as raw:
            if many:
                cur = raw.cursor()
                cur.executemany(text, [_pg_args(p, named) for p in params])
                return _Fetched([], cur.rowcount, None)
            cur = raw.execute(text, _pg_args(params, named))
            rows = cur.fetchall() if cur.description is not None else []
            return _Fetched(rows, cur.rowcount, cur.description)

    # -- both -----------------------------------------------------------------------------------------
    def execute(self, sql: str, params: Params = ()) -> Any:
        if self.postgres:
            return self._pg(sql, params)
        return (self._conn if self._conn is not None else self._store.conn).execute(sql, params)

    def native(self, sql: str, params: Params = ()) -> Any:
        """`execute` for SQL already in the backend's own dialect (an adapter's statement, `%s` on
        PostgreSQL): run as given, never rewritten."""
        if self.postgres:
            return self._pg(sql, params, rewrite=False)
        return self.execute(sql, params)

    def executemany(self, sql: str, seq: Any) -> Any:
        if self.postgres:
            return self._pg(sql, seq, many=True)
        return (self._conn if self._conn is not None else self._store.conn).executemany(sql, seq)

    def all(self, sql: str, params: Params = ()) -> list[Any]:
        if self.postgres or self._conn is not None:
            return list(self.execute(sql, params).fetchall())
        return list(self._store.read(sql, params))

    def one(self, sql: str, params: Params = ()) -> Any:
        if self.postgres or self._conn is not None:
            return self.execute(sql, params).fetchone()
        return self._store.read_one(sql, params)


def direct(target: Any) -> Direct:
    """Direct SQL on `target`: a store, an engine, or a write's / reading's connection."""
    return Direct(target)
