"""Opening a PostgreSQL database (store.py's first steps): pgvector present and installed, the
database ours and not newer (its generation), and reconciling its schema (create, add columns,
never drop) under the one whole-database lock."""

from __future__ import annotations

import uuid
from collections import defaultdict
from contextlib import suppress
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from engine.errors import EngineError, ReadOnly
from engine.storage import readonly as read_only
from engine.storage.port import Reconciled
from engine.storage.postgres import schema

# Reconciling the schema (DDL) is the one whole-database step: it takes this lock alone.
LOCK_KEY = int.from_bytes(b"MemC", "big")
ITERATIVE_SCAN = (0, 8)  # the pgvector version with hnsw.iterative_scan


def version_of(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".")[:2] if p.isdigit())


def shown(url: str) -> str:
    """The URL without its password, for messages."""
    head, sep, tail = url.partition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, cred = head.partition("//")
    return f"{scheme}//{cred.split(':', 1)[0]}:***@{tail}"


def schema_hash() -> str:
    return schema.schema_hash()


def install_vector(url: str, conn: psycopg.Connection[Any]) -> None:
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege:
        who: Any = conn.execute("SELECT current_user, current_database()").fetchone()
        raise EngineError(
            f"{shown(url)}: pgvector is on the server but not installed in database {who[1]}, and"
            f" role {who[0]} may not install it: ask an administrator to run CREATE EXTENSION vector"
            " there"
        ) from None


def identity(url: str, conn: psycopg.Connection[Any]) -> int:
    """The database's generation (0: empty); refuses a foreign or newer database."""
    tables = {
        r[0]
        for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
    }
    if not tables:
        return 0
    meta: dict[str, str] = {}
    if "meta" in tables:
        with suppress(psycopg.Error):
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if meta.get("app") != schema.OURS:
        raise EngineError(
            f"{shown(url)}: this database is not a memconsole database "
            f"(it has {len(tables)} other tables); refusing to write to it"
        )
    gen = int(meta.get("generation") or 0)
    if gen > schema.GENERATION:
        raise EngineError(
            f"this database was written by a newer memconsole (schema generation {gen}; "
            f"this one knows {schema.GENERATION}): upgrade memconsole"
        )
    return gen


def reconcile_schema(url: str, pool: ConnectionPool[Any], readonly: bool, kind: str | None) -> Reconciled:
    """Create what is missing, add missing columns, record the generation (one transaction,
    under the DDL lock). Never drops data."""
    out = Reconciled()
    with pool.connection() as raw:
        out.from_generation = identity(url, raw)
        if out.from_generation == schema.GENERATION and meta(raw, "pg_schema") == schema_hash():
            return out
        if readonly:  # a standby cannot reconcile: its primary must, once
            raise ReadOnly(
                f"{shown(url)}: {read_only.reason(kind or read_only.OPENED)};"
                " this database's schema needs reconciling: open it once on the primary"
                " (read-write) with this memconsole"
            )
        raw.execute("BEGIN")
        try:
            raw.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])
            identity(url, raw)  # another process may have changed it meanwhile
            have = columns(raw)
            for t in schema.PG_TABLES:
                if t.name not in have:
                    raw.execute(schema.pg_table(t))
                    out.created.append(t.name)
                    continue
                for col, decl in t.columns:
                    if col not in have[t.name]:
                        raw.execute(f"ALTER TABLE {t.name} ADD COLUMN {schema.pg_add_column(col, decl)}")
                        out.added_columns.append(f"{t.name}.{col}")
            for stmt in schema.reconcile_statements():
                raw.execute(stmt)
            out.created += [n for n in ("fts_terms", "fts_docs", "memory_vectors") if n not in have]
            for key, value in (
                ("app", schema.OURS),
                ("generation", str(schema.GENERATION)),
                ("pg_schema", schema_hash()),
            ):
                raw.execute(
                    "INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE"
                    " SET value = excluded.value",
                    [key, value],
                )
            raw.execute(
                "INSERT INTO meta(key, value) VALUES ('database_id', %s) ON CONFLICT (key) DO NOTHING",
                [uuid.uuid4().hex],
            )
            raw.execute("COMMIT")
        except BaseException:
            raw.execute("ROLLBACK")
            raise
    return out


def meta(raw: psycopg.Connection[Any], key: str) -> str | None:
    try:
        row = raw.execute("SELECT value FROM meta WHERE key = %s", [key]).fetchone()
    except psycopg.Error:
        return None
    return None if row is None else row[0]


def columns(raw: psycopg.Connection[Any]) -> dict[str, set[str]]:
    have: dict[str, set[str]] = defaultdict(set)
    for r in raw.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
    ).fetchall():
        have[r[0]].add(r[1])
    return have
