"""Concurrency, full version (`make stress`): 8 writer processes x 500 memories and 500 messages
while a console-like process searches continuously (see tests/engine/storage/test_concurrency.py;
writers use HashEmbedder for the reason given there)."""

from __future__ import annotations

from tests.engine.storage.test_concurrency import run_load


def test_eight_writers_five_hundred_each_and_a_searcher(tmp_path):
    acks, counts = run_load(tmp_path, writers=8, per_writer=500)
    n, worst, p95, an, aworst, ap95 = acks.summary[0].split()
    print(
        f"\nconsole-like reader under 8 writers: {n} read rounds (search + message search + "
        f"counts) max {worst} ms, p95 {p95} ms; {an} searches recording access (a write) max "
        f"{aworst} ms, p95 {ap95} ms; counts {counts}"
    )
    assert int(n) > 0 and int(an) > 0
