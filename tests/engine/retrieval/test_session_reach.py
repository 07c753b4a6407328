"""Issue #26: session context reaches two turns each way (search.session_reach = 2). In a dialogue
the turn two away is the same speaker's next or previous turn; the answer often sits there when
the question's words are in the turn that set it up. Both backends."""

from __future__ import annotations

import pytest

from engine import HashEmbedder, open_engine
from engine.config import SearchSettings, Settings

pytestmark = pytest.mark.backends

Q = "telescope meteor shower"
TURNS = [
    "Mel: I want to watch the meteor shower with a telescope",
    "Caro: oh nice, where will you go",
    "Mel: up north, a small Dobsonian with eight inch aperture",
    "Caro: sounds lovely, take warm clothes",
]


def _open(db_path, clock, reach: int):
    settings = Settings(search=SearchSettings(session_reach=reach))
    return open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="tester", settings=settings)


def test_the_turn_two_away_gains_context_and_explain_agrees(db_path, clock):
    eng = _open(db_path, clock, 2)
    try:
        eng.add_memories(
            [{"content": f"unrelated weather chatter {i}", "session_id": "n"} for i in range(30)]
        )
        ids = eng.add_memories([{"content": t, "session_id": "s1"} for t in TURNS], dedup=False)
        other = eng.add_memories([{"content": "Mel: a Dobsonian again", "session_id": "s2"}], dedup=False)
        hits = {h.id: h for h in eng.search(Q, k=40, mode="hybrid", record_access=False).hits}
        first, answer = hits[ids[0]], hits[ids[2]]
        beta = SearchSettings().session_context
        # the answer turn (two after the match) gets beta x the match's fused score, at least
        assert answer.breakdown.context >= beta * first.breakdown.rrf * first.breakdown.boost - 1e-6
        assert answer.breakdown.context > 0
        # explain scores it the same way search did
        x = eng.explain(Q, ids[2], k=40)
        assert x.final == pytest.approx(answer.score, abs=1e-5)
        # another session's turn gains nothing from s1
        assert other[0] not in hits or hits[other[0]].breakdown.context == 0
    finally:
        eng.close()
    old = _open(db_path, clock, 1)  # reach 1: the adjacent turns only (the behaviour before)
    try:
        hits = {h.id: h for h in old.search(Q, k=40, mode="hybrid", record_access=False).hits}
        two_away = hits.get(ids[2])
        near = {h.id: h.breakdown.context for h in hits.values()}
        assert near.get(ids[1], 0) > 0
        assert two_away is None or two_away.breakdown.context < answer.breakdown.context
    finally:
        old.close()


def test_a_reach_outside_one_or_two_is_refused():
    from engine.config import ConfigError, validate

    with pytest.raises(ConfigError, match="search.session_reach"):
        validate(Settings(search=SearchSettings(session_reach=3)))
