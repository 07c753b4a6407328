"""Console fixtures: a seeded real database (sqlite-vec loaded, HashEmbedder, FixedClock)."""

from __future__ import annotations

import pytest

from .seed import seeded_engine
from .seed_lifecycle import seeded_lifecycle_engine


@pytest.fixture
def seeded(tmp_path):
    eng, ids = seeded_engine(tmp_path / "console.db")
    yield eng, ids
    eng.close()


@pytest.fixture
def lifecycle(tmp_path):
    """(engine, ids, clock) over the shared seed plus the lifecycle rows; closed afterwards."""
    eng, ids, clock = seeded_lifecycle_engine(tmp_path / "lifecycle.db")
    yield eng, ids, clock
    eng.close()
