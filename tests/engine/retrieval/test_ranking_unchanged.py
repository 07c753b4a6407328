"""Issue #24: the agent path's CPU was cut (search orchestration, matrices, the write path)
without moving a rank. The hybrid top 10 of a dozen recalls on a seeded store — speakers, dates,
sessions, agents, tiers; through the store's SQL and through the in-memory matrices — equals what
main recorded before the work (golden/hybrid_top10.json, written by ranking_golden.py from main at
d1a7049): the same memories in the same order, the same scores and breakdown parts. Main ranked
with session context one turn each way; `search.session_reach = 1` keeps that here (the two-turn
reach, a ranking change of its own, is tested in test_session_reach.py)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from engine import FixedClock, HashEmbedder, open_engine
from engine.config import load_settings
from tests.engine.retrieval.ranking_golden import GOLDEN, T0, both_paths, no_auto_matrices, seed

pytestmark = pytest.mark.backends


def one_turn_reach(settings):
    return replace(settings, search=replace(settings.search, session_reach=1))


def test_hybrid_top10_is_what_main_ranked(db_path, backend):
    eng = open_engine(
        db_path,
        embedder=HashEmbedder(),
        clock=FixedClock(T0),
        actor="tester",
        settings=one_turn_reach(no_auto_matrices(load_settings())),
    )
    try:
        seed(eng)
        got = both_paths(eng)
    finally:
        eng.close()
    want = json.loads(GOLDEN.read_text())[backend]
    for path in ("sql", "matrix"):
        assert list(got[path]) == list(want[path])
        for q, rows in want[path].items():
            mine = got[path][q]
            # the memories, in order, with their ranks in each retriever, boost and context
            assert [[r[0], r[2], r[3]] for r in mine] == [[r[0], r[2], r[3]] for r in rows], (path, q)
            assert [r[1] for r in mine] == pytest.approx([r[1] for r in rows], abs=1e-6), (path, q)
            assert [x for r in mine for x in r[4:]] == pytest.approx(
                [x for r in rows for x in r[4:]], abs=1e-6
            ), (
                path,
                q,
            )
