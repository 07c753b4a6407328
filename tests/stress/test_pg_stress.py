"""Many writers on PostgreSQL, full version (`make stress`): 8 writer processes x 500 memories
lose nothing and never see a serialization or lock error; then rounds of 8 writers of which 4 are
SIGKILLed at different moments, the database checked after each round (every acknowledged write
present, keyword and vector indexes consistent with the rows). The small version is
tests/postgres/test_pg_many_writers.py, whose writer and checks these reuse."""

from __future__ import annotations

import time

import pytest

from tests.postgres.test_pg_many_writers import T0, check_database, run_writers


def _schema(url: str) -> None:
    from engine import FixedClock, HashEmbedder, open_engine

    open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now").close()


def test_eight_writers_times_five_hundred_lose_nothing(pg_url, tmp_path):
    _schema(pg_url)
    t0 = time.monotonic()
    acks = run_writers(pg_url, tmp_path, writers=8, n=500)
    took = time.monotonic() - t0
    got = check_database(pg_url, acks)
    print(f"8 x 500 writes in {took:.1f} s ({4000 / took:.0f}/s); {got}")
    assert got == {"rows": 4000, "acknowledged": 4000}


@pytest.mark.parametrize("round_", range(3))
def test_writers_killed_mid_write_leave_every_acknowledged_write(pg_url, tmp_path, round_):
    _schema(pg_url)
    total_rows = 0
    for step in range(2):  # a second round on the same database, after the first's kills
        sub = tmp_path / f"step{step}"
        sub.mkdir()
        kill_after = 5 + 13 * round_ + 7 * step
        acks = run_writers(pg_url, sub, writers=8, n=120, kill=4, kill_after=kill_after, wid0=8 * step)
        got = check_database(pg_url, acks)
        new_rows = got["rows"] - total_rows
        total_rows = got["rows"]
        assert got["acknowledged"] >= 4 * 120 + 4 * kill_after
        assert new_rows - got["acknowledged"] <= 4  # at most one unacknowledged write per killed writer
