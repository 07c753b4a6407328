"""Console fixtures: a seeded real database (sqlite-vec loaded, HashEmbedder, FixedClock)."""
from __future__ import annotations

import pytest

from .seed import seeded_engine


@pytest.fixture
def seeded(tmp_path):
    eng, ids = seeded_engine(tmp_path / "console.db")
    yield eng, ids
    eng.close()
