"""Issue 22 (Trust), faults: a write to a memory a curator merge has just absorbed is never silently
kept in the archived source. Operator changes are refused naming the survivor; reinforcements
land on the survivor; both are audited — also when the merge was applied by another process
between the writer's read and its write."""

from __future__ import annotations

import json

import pytest

from engine import HashEmbedder, InvalidInput, open_engine
from engine.errors import MergedAway
from tests.direct_sql import direct
from tests.engine.curator_helpers import OTHER, TWIN_A, TWIN_B

pytestmark = pytest.mark.backends


@pytest.fixture
def merged(eng):
    """(absorbed source, survivor) after a merge was approved."""
    a = eng.add_memory(TWIN_A, agent="atlas", importance=0.9, dedup=False)
    b = eng.add_memory(TWIN_B, agent="atlas", dedup=False)
    eng.add_memory(OTHER, agent="atlas", dedup=False)
    p = eng.curator.approve(eng.curator.run().proposals[0].id, reason="same fact")
    assert eng.memories.get(b).absorbed_into == p.result_id
    return b, p.result_id, a


def _row(eng, mid: int) -> tuple:
    return tuple(direct(eng.store).one("SELECT * FROM memories WHERE id = ?", (mid,)))


def _audit(eng, action: str) -> list[tuple]:
    return [
        tuple(r)
        for r in direct(eng.store).all(
            "SELECT target_id, summary FROM audit WHERE action = ? ORDER BY id", (action,)
        )
    ]


WRITES = {
    "edit": lambda eng, m: eng.memories.edit(m, "the key moved to ops/prod"),
    "pin": lambda eng, m: eng.memories.pin(m),
    "unpin": lambda eng, m: eng.memories.unpin(m),
    "set-importance": lambda eng, m: eng.memories.set_importance(m, 0.2),
    "promote-core": lambda eng, m: eng.memories.set_tier(m, "core"),
    "restore": lambda eng, m: eng.memories.restore(m),
}


@pytest.mark.parametrize("what", list(WRITES))
def test_a_change_to_an_absorbed_memory_is_refused_naming_the_survivor_and_audited(eng, merged, what):
    source, survivor, _ = merged
    before, survivor_before = _row(eng, source), _row(eng, survivor)
    with pytest.raises(MergedAway) as e:
        WRITES[what](eng, source)
    msg = str(e.value)
    assert f"memory {source} was merged into memory {survivor}" in msg and "\n" not in msg
    assert isinstance(e.value, InvalidInput) and e.value.survivor == survivor
    assert _row(eng, source) == before and _row(eng, survivor) == survivor_before
    refused = _audit(eng, "refused")
    assert refused and refused[-1][0] == str(source) and str(survivor) in refused[-1][1]


def test_a_merge_applied_by_another_process_after_the_read_is_caught_in_the_write(eng, db_path, clock):
    a = eng.add_memory(TWIN_A, agent="atlas", importance=0.9, dedup=False)
    b = eng.add_memory(TWIN_B, agent="atlas", dedup=False)
    read_then_merge = eng.memories.get

    def get(mid):  # the operator's read happens, then another process applies the merge
        m = read_then_merge(mid)
        with open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="other") as other:
            other.curator.approve(other.curator.run().proposals[0].id)
        eng.memories.get = read_then_merge
        return m

    eng.memories.get = get
    before = _row(eng, b)
    with pytest.raises(MergedAway):
        eng.memories.edit(b, "an edit that would have been lost in the archive")
    after = _row(eng, b)
    assert after[:3] == before[:3] and eng.memories.get(b).content == TWIN_B
    assert eng.memories.get(b).absorbed_into is not None and _audit(eng, "refused")
    del a


def test_reinforcing_an_absorbed_memory_reinforces_the_survivor_audited(eng, merged, clock):
    source, survivor, _ = merged
    before = _row(eng, source)
    clock.advance(30 * 86400)
    got = eng.memories.reinforce(source, reason="used it")
    assert got.id == survivor and _row(eng, source) == before
    target, summary = _audit(eng, "reinforce")[-1]
    assert target == str(survivor) and json.loads(summary)["asked_for"] == source


def test_bulk_pin_refuses_the_absorbed_one_and_pins_the_rest(eng, merged):
    source, survivor, _ = merged
    out = {o.id: o for o in eng.memories.pin_many([source, survivor])}
    assert out[source].outcome == "refused" and not out[source].ok and str(survivor) in out[source].note
    assert out[survivor].outcome == "done" and eng.memories.get(survivor).pinned
    assert not eng.memories.get(source).pinned and _audit(eng, "refused")
