"""Crash safety, full version (`make stress`): 60 SIGKILLs of a mixed writer at random moments
across 6 database files, each file checked after every kill (see tests/engine/storage/test_crash_safety.py)."""

from __future__ import annotations

import pytest

from tests.stress.harness import Acks, check_database, kill_at_random

FILES, KILLS_PER_FILE = 6, 10


@pytest.mark.parametrize("f", range(FILES))
def test_sixty_kills(tmp_path, f):
    db = tmp_path / "crash.db"
    acks = Acks()
    for k in range(KILLS_PER_FILE):
        got = kill_at_random(db, tmp_path / f"acks{k}.txt", 1000 * (f + 1) + k, max_delay=2.5)
        assert got.ready and not got.errors, got.errors
        acks.merge(got)
        counts = check_database(db, acks)
    print(
        f"file {f}: {len(acks.memories)} memories, {len(acks.messages)} messages acknowledged; "
        f"counts {counts}"
    )
