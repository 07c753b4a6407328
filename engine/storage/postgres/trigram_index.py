"""pg_trgm GIN indexes on memories.content and messages.content, where the server has pg_trgm.

They only find the trigram search's candidate texts faster (`content ILIKE '%term%'` is what a
`gin_trgm_ops` index answers: pg_trgm folds case as ILIKE does, and the bitmap scan rechecks every
row); which rows match and how they rank stays the engine's (keyword_trigram.py), so results are the
same with or without them. Without pg_trgm, or where this role may not install it, the same query
scans the table.

`ensure` runs when a read-write store opens (reconcile): it installs the extension if the server has
it and the role may (pg_trgm is a trusted extension: CREATE on the database is enough), then builds
what is missing. It never raises: anything refused leaves the scan, and `state` (a catalog read,
used by doctor) says which path runs and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import psycopg

from engine.storage.postgres.connection import raw_of

if TYPE_CHECKING:
    from engine.storage.port import Connection

EXTENSION = "pg_trgm"
INDEXES = {"memories": "memories_trgm", "messages": "messages_trgm"}  # table -> index
BUILD_KEY = int.from_bytes(b"MTrg", "big")  # the advisory lock one index builder holds
_NAMES = ", ".join(f"'{n}'" for n in INDEXES.values())  # constants, inlined: both connection kinds
_OURS = "c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())"


@dataclass(frozen=True)
class TrigramPath:
    """Which way trigram search finds its candidates here: `indexed`, or the scan and why.
    `sound` is False only when something that should be there is not (doctor fails it)."""

    indexed: bool
    detail: str
    sound: bool = True
    can_install: bool = False  # the extension is missing but this role may install it


Conn: TypeAlias = "Connection | psycopg.Connection[Any]"


def _raw(conn: Conn) -> psycopg.Connection[Any]:
    return conn if isinstance(conn, psycopg.Connection) else raw_of(conn)


def _one(conn: Conn, sql: str) -> Any:
    return _raw(conn).execute(sql).fetchone()  # Any: the store's rows and psycopg's tuples alike


def state(conn: Conn) -> TrigramPath:
    """What the catalogs say now (reads only; `conn` may be the store's or a raw psycopg one)."""
    ext = _one(
        conn,
        "SELECT e.extversion, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
        f" WHERE e.extname = '{EXTENSION}'",
    )
    if ext is None:
        trusted = _one(
            conn, f"SELECT bool_or(trusted) FROM pg_available_extension_versions WHERE name = '{EXTENSION}'"
        )[0]
        if trusted is None:  # no version of it on the server
            return TrigramPath(False, "engine n-gram scan: this server has no pg_trgm extension")
        role, db, superuser, may_create = _one(
            conn,
            "SELECT current_user, current_database(), (SELECT rolsuper FROM pg_roles WHERE rolname ="
            " current_user), has_database_privilege(current_database(), 'CREATE')",
        )
        if superuser or (trusted and may_create):
            return TrigramPath(
                False,
                f"engine n-gram scan: pg_trgm is on the server but not installed in {db}"
                " (open it read-write once to install it and build the indexes)",
                can_install=True,
            )
        return TrigramPath(
            False,
            f"engine n-gram scan: pg_trgm is on the server but role {role} may not install it in {db}"
            f" (an administrator can: CREATE EXTENSION {EXTENSION})",
        )
    rows = (
        _raw(conn)
        .execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            f" WHERE c.relname IN ({_NAMES}) AND " + _OURS
        )
        .fetchall()
    )
    valid = {r[0] for r in rows if r[1]}
    lacking = [n for n in INDEXES.values() if n not in valid]
    if lacking:
        return TrigramPath(
            False,
            f"engine n-gram scan: pg_trgm {ext[0]} is installed but {', '.join(lacking)} is missing or"
            " invalid (the tables' owner's next read-write open builds it)",
            sound=False,
        )
    return TrigramPath(True, f"pg_trgm {ext[0]} GIN indexes ({', '.join(INDEXES.values())}) find candidates")


def create_statements(ext_schema: str) -> list[str]:
    ops = f'"{ext_schema}".gin_trgm_ops'  # where the extension lives, in or out of search_path
    return [
        f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} USING gin (content {ops})"
        for table, name in INDEXES.items()
    ]


def ensure(raw: psycopg.Connection[Any]) -> TrigramPath:
    """Install pg_trgm and build the indexes where possible (raw: an autocommit connection, not
    in a transaction). Returns the path now in use; never raises for a refusal.

    The build is CONCURRENTLY: on a big shared database it takes a while (bench/pg_trigram.py),
    and other machines' writes go on meanwhile. One process builds at a time (a session advisory
    lock); one that finds it taken scans until the indexes are there."""
    try:
        now = state(raw)
        if now.indexed or (not now.can_install and now.sound):
            return now
        if not _one(raw, f"SELECT pg_try_advisory_lock({BUILD_KEY})")[0]:
            return now
        try:
            if now.can_install:
                try:
                    raw.execute(f"CREATE EXTENSION IF NOT EXISTS {EXTENSION}")
                except psycopg.errors.InsufficientPrivilege:
                    return state(raw)  # says the role may not
            ext_schema = _one(
                raw,
                "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
                f" WHERE e.extname = '{EXTENSION}'",
            )[0]
            invalid = raw.execute(
                "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                f" WHERE c.relname IN ({_NAMES}) AND NOT i.indisvalid AND " + _OURS
            ).fetchall()
            for (name,) in invalid:  # an interrupted build (none runs now: we hold the lock)
                raw.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
            for stmt in create_statements(ext_schema):
                raw.execute(stmt)
        finally:
            raw.execute(f"SELECT pg_advisory_unlock({BUILD_KEY})")
        return state(raw)
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return TrigramPath(False, f"engine n-gram scan: the pg_trgm indexes could not be built ({first})")
