"""Issue #26: the top n does not depend on k. An operator comparing a recall of k=5 with a search
of k=20 or k=200 sees the same first hits in the same order: the candidate pool and the scaling of
cosines are fixed by search.candidates, not by k; candidates past the pool follow it."""

from __future__ import annotations

import random

import pytest

pytestmark = pytest.mark.backends

WORDS = (  # noqa: SIM905 - a paragraph of words reads better than a column
    "deploy staging vault key rotate database snapshot backup nightly production review pull request "
    "lines incident pager on-call escalate runbook release notes changelog flag launch cache latency "
    "queue retry timeout payments refund ledger invoice customer tenant region cluster node disk "
    "memory budget alert dashboard metric trace span log retention policy audit access token secret"
).split()
QUERIES = [
    "rotate the staging vault key",
    "payments refund queue retry",
    "incident escalate to the on-call pager",
    "cluster node disk alert dashboard",
    "release notes changelog for the launch",
    "retention policy for audit logs",
]


def _store(eng, n: int = 320) -> None:
    rng = random.Random(26)
    eng.add_memories(
        [
            dict(content=" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 14))), agent="atlas")
            for _ in range(n)
        ]
    )


def _ids(eng, q: str, k: int, **kw) -> list[int]:
    return [h.id for h in eng.search(q, k=k, record_access=False, **kw).hits]


def test_first_hits_are_the_same_for_every_k(eng):
    _store(eng)
    for q in QUERIES:
        for mode in ("hybrid", "keyword", "vector"):
            five = _ids(eng, q, 5, mode=mode)
            assert len(five) == 5
            assert _ids(eng, q, 20, mode=mode)[:5] == five, (q, mode)
            two_hundred = _ids(eng, q, 200, mode=mode)
            assert two_hundred[:5] == five, (q, mode)
            assert _ids(eng, q, 200, mode=mode)[:20] == _ids(eng, q, 20, mode=mode), (q, mode)
            assert len(two_hundred) == len(set(two_hundred))


def test_k_past_the_pool_still_returns_k_hits(eng):
    _store(eng)
    hits = _ids(eng, "deploy staging vault", 300, mode="hybrid")
    assert len(hits) == 300 and len(set(hits)) == 300
    assert hits[:100] == _ids(eng, "deploy staging vault", 100, mode="hybrid")
