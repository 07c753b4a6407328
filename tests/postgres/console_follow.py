"""An open console following another writer's commit (tests/postgres/test_pg_live.py directly,
tests/postgres/test_pg_bouncer_doors.py through PgBouncer): how long its header takes to show it."""

from __future__ import annotations

import time
from collections.abc import Callable


async def refresh_after(e, label: str, write: Callable[[], float]) -> float:
    """Open the console on `e` (holding one memory), wait for its live view's baseline, run
    `write` (another writer adds one memory; returns the time.monotonic() of its commit) and return
    the seconds until the header counts it. Fails if it never does within 3 s or the app erred."""
    from console.app import MemConsole
    from console.app.widgets.header import StatusHeader

    app = MemConsole(e, start_embedder=False, db_label=label)
    async with app.run_test(size=(120, 40)) as pilot:
        header = app.query_one(StatusHeader)

        async def total() -> int:
            await pilot.pause(0.01)
            counts = header.counts
            return -1 if counts is None else sum(counts.memories_by_tier.values())

        deadline = time.monotonic() + 10
        while await total() != 1 and time.monotonic() < deadline:
            pass
        assert await total() == 1
        while app._data_version is None and time.monotonic() < deadline:  # the poll's baseline
            await pilot.pause(0.05)
        done = write()
        while await total() != 2 and time.monotonic() - done < 3:
            pass
        waited = time.monotonic() - done
        assert await total() == 2
    assert app.errors == []
    return waited
