"""Shared fixtures: real SQLite files with sqlite-vec; a fast deterministic embedder for unit
tests and ONE real MiniLM model per test session where meaning matters."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The key and audit anchors of the run live in one throwaway folder, never in ~/.config.
if "MEMCONSOLE_STATE" not in os.environ:
    import tempfile

    os.environ["MEMCONSOLE_STATE"] = tempfile.mkdtemp(prefix="memconsole-state-")

from engine import FixedClock, HashEmbedder, open_engine  # noqa: E402

T0 = "2026-01-01T00:00:00Z"

# Tests that drive a whole app (Pilot) or several OS processes depend on scheduling: on a loaded
# 2-core machine a worker can finish a frame late. One rerun each; a real bug fails twice.
TIMING_SENSITIVE = (
    "tests/screens/",
    "tests/console/test_app",
    "tests/engine/test_concurrency",
    "tests/engine/test_crash",
)


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
def db_path(tmp_path):
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
