"""Shared fixtures: real SQLite files with sqlite-vec; a fast deterministic embedder for unit
tests and ONE real MiniLM model per test session where meaning matters."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from engine import FixedClock, HashEmbedder, open_engine  # noqa: E402

T0 = "2026-01-01T00:00:00Z"


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
