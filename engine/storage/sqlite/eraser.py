"""SQLite side of a forget: FTS5 'optimize' of every full-text index (old segments merged away;
`secure_delete`, set on every connection, zeroes the freed pages), `wal_checkpoint(TRUNCATE)`, the
database's files (db, -wal, -shm) and the live text read from sqlite_master / table_info."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from engine.storage.erasure import scrubbed_key
from engine.storage.sqlite import schema

if TYPE_CHECKING:
    from engine.storage.port import Connection
    from engine.storage.reach import ServerEraser
    from engine.storage.sqlite.connection import SqliteConnection
    from engine.storage.sqlite.store import Store

FTS_INDEXES = tuple(v.name for v in schema.VIRTUALS if "USING fts5" in v.sql)


class SqliteEraser:
    def __init__(self, store: Store) -> None:
        self._store = store  # the checkpoint runs on the store's own connection, under its lock

    @property
    def server(self) -> ServerEraser | None:
        """A file database: no server levels, its verification scans `files()`."""
        return None

    def purge_indexes(self, conn: Connection) -> None:
        for t in FTS_INDEXES:
            conn.execute(f"INSERT INTO {t}({t}) VALUES ('optimize')")

    def truncate_log(self, tries: int, pause: float) -> bool:
        """Another process's open read transaction blocks the truncation; readers are brief, so
        wait a little for them to finish."""
        for i in range(tries):
            with self._store.lock:
                busy, _, _ = self._store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy == 0:
                return True
            if i + 1 < tries:
                time.sleep(pause)
        return False

    def files(self) -> list[Path]:
        db = self._store.path.expanduser().absolute().resolve()  # -wal lies beside the real file
        return [db, Path(f"{db}-wal"), Path(f"{db}-shm")]

    def live_texts(self, conn: Connection, shortest: int) -> list[str]:
        """Not FTS/vec0 internals (they mirror the tables), except their settings tables."""
        virt = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
            )
        ]
        # The schema's own words (column names, trigger bodies) and index settings are live too.
        out = [r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")]
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
            "'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'"
        ).fetchall():
            if any(name.startswith(v + "_") for v in virt) and not name.endswith(("_config", "_info")):
                continue
            settings = name.endswith(("_config", "_info"))
            for col in [r[1] for r in conn.execute(f'PRAGMA table_info("{name}")')]:
                # One string per column, joined inside SQLite (a Python loop per value costs seconds).
                cond = (
                    "typeof(c) != 'blob'"
                    if settings
                    else f"typeof(c) = 'text' AND length(c) >= {int(shortest)}"
                )
                row = conn.execute(
                    f'SELECT group_concat(c, char(10)) FROM (SELECT "{col}" AS c FROM "{name}") WHERE {cond}'
                ).fetchone()
                if row and row[0]:
                    out.append(row[0])
        return out

    def quoting(self, conn: Connection, table: str, column: str, shortest: int) -> list[tuple[Any, str]]:
        key = scrubbed_key(table, column)
        rows = conn.execute(
            f"SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL AND length({column}) >= ?",
            (int(shortest),),
        ).fetchall()
        return [(r[0], r[1]) for r in rows if isinstance(r[1], str)]

    def overwrite(self, conn: Connection, table: str, column: str, key: Any, value: str) -> None:
        conn.execute(f"UPDATE {table} SET {column} = ? WHERE {scrubbed_key(table, column)} = ?", (value, key))

    @contextmanager
    def tolerant(self, conn: Connection) -> Iterator[None]:
        """The store's lock is held by the caller, so no other thread reads meanwhile."""
        raw = cast("SqliteConnection", conn)
        before = raw.text_factory
        raw.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
        try:
            yield
        finally:
            raw.text_factory = before
