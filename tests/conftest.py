"""Shared fixtures: real SQLite files with sqlite-vec; a fast deterministic embedder for unit
tests and ONE real MiniLM model per test session where meaning matters.

Both backends: a test module marked `pytestmark = pytest.mark.backends` runs each of its tests that
uses `eng`, `real_eng` or `db_path` twice, on a SQLite file and on a fresh PostgreSQL database
(tests/pg_server.py: one server per session); there `db_path` is the database's URL. A test that only
means something on SQLite says why with `@pytest.mark.sqlite_only("reason")`; one whose PostgreSQL
part is not built yet with `@pytest.mark.pg_xfail("reason")` (strict: it fails loudly once it passes).
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The key and audit anchors of the run live in one throwaway folder, never in ~/.config.
if "MEMCONSOLE_STATE" not in os.environ:
    import tempfile

    os.environ["MEMCONSOLE_STATE"] = tempfile.mkdtemp(prefix="memconsole-state-")
# Under pytest-xdist (`make test` runs `-n 2`) each worker inherits the controller's folder: give
# each its own below it, as each has its own PostgreSQL server (tests/pg_server.py), so no two
# workers ever share a key, an anchor or a server folder.
if os.environ.get("PYTEST_XDIST_WORKER"):
    _worker_state = os.path.join(os.environ["MEMCONSOLE_STATE"], os.environ["PYTEST_XDIST_WORKER"])
    os.makedirs(_worker_state, mode=0o700, exist_ok=True)
    os.environ["MEMCONSOLE_STATE"] = _worker_state

from engine import FixedClock, HashEmbedder, open_engine  # noqa: E402
from tests.pg_bouncer import pg_bouncer  # noqa: E402, F401 - PgBouncer, transaction pooling (#24)
from tests.pg_replica import pg_replica, replica_db  # noqa: E402, F401 - a streaming standby (#24)
from tests.pg_server import pg_db, pg_server, pg_url  # noqa: E402, F401 - fixtures for every test dir

T0 = "2026-01-01T00:00:00Z"

# Tests that drive a whole app (Pilot) or several OS processes depend on scheduling: on a loaded
# 2-core machine a worker can finish a frame late. One rerun each; a real bug fails twice.
# tests/agents: every test there starts `memconsole mcp` servers or Hermes processes and waits on
# them with deadlines; under `-n 2` the other worker shares the two cores with them.
TIMING_SENSITIVE = (
    "tests/screens/",
    "tests/agents/",
    "tests/console/test_app",
    "tests/engine/storage/test_concurrency",
    "tests/engine/storage/test_crash_safety",
)


def pytest_configure(config):
    for line in (
        "backends: run the module's engine tests on SQLite and on PostgreSQL",
        "sqlite_only(reason): this test means something on SQLite only (not run on PostgreSQL)",
        "pg_xfail(reason): expected to fail on PostgreSQL until the part named is built (strict)",
    ):
        config.addinivalue_line("markers", line)


BACKEND_FIXTURES = ("eng", "real_eng", "db_path")


def pytest_generate_tests(metafunc):
    if metafunc.definition.get_closest_marker("backends") is None:
        return
    if (
        not any(f in metafunc.fixturenames for f in BACKEND_FIXTURES)
        or "backend" not in metafunc.fixturenames
    ):
        return
    params: list = ["sqlite"]
    if metafunc.definition.get_closest_marker("sqlite_only") is None:
        xfail = metafunc.definition.get_closest_marker("pg_xfail")
        marks = () if xfail is None else (pytest.mark.xfail(strict=True, reason=str(xfail.args[0])),)
        params.append(pytest.param("postgres", marks=marks))
    metafunc.parametrize("backend", params, indirect=True)


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.nodeid.replace("\\", "/")
        if path.startswith(TIMING_SENSITIVE):
            item.add_marker(pytest.mark.flaky(reruns=1))


@pytest.fixture(scope="session")
def minilm():
    """The real all-MiniLM-L6-v2 embedder, loaded once for the whole run."""
    from engine.embed import shared_minilm

    return shared_minilm()


@pytest.fixture
def clock():
    return FixedClock(T0)


@pytest.fixture
def backend(request):
    """ "sqlite" unless the module runs on both backends (see the top of this file)."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def db_path(tmp_path, backend, request):
    """A SQLite file's path; on PostgreSQL, a fresh database's URL."""
    if backend == "postgres":
        return request.getfixturevalue("pg_db")
    return tmp_path / "memory.db"


@pytest.fixture
def eng(db_path, clock):
    """An engine with the fast hash embedder (spelling, not meaning)."""
    e = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="tester")
    yield e
    e.close()


@pytest.fixture
def real_eng(db_path, clock, minilm):
    """An engine with the real model (shared across tests)."""
    e = open_engine(db_path, embedder=minilm, clock=clock, actor="tester")
    yield e
    e.close()
