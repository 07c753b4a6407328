"""Crash safety, small version (the full one, 50+ kills, is tests/stress/test_crash_stress.py).

A writer process doing mixed writes is killed with SIGKILL at a random moment; the next open must
find a sound file: integrity_check and FTS5 integrity-check pass, memories / FTS / vec0 agree on
ids (and each vector matches its text), and every write acknowledged before the kill is there.
Writers use HashEmbedder (see tests/stress/workers.py for why)."""

from __future__ import annotations

import pytest

from tests.stress.harness import Acks, check_database, kill_at_random


# One seed here (two kills, the second on the recovered file): seeds 2 and 3 cost ~7 s each on the
# loaded CI machine and proved nothing the 60 kills of tests/stress/test_crash_stress.py do not.
@pytest.mark.parametrize("seed", [1])
def test_kill_9_loses_no_acknowledged_write(tmp_path, seed):
    db = tmp_path / "crash.db"
    acks = Acks()
    for trial in range(2):  # a second kill on the recovered file, too
        got = kill_at_random(db, tmp_path / f"acks{trial}.txt", seed * 10 + trial)
        assert got.ready and not got.errors, got.errors
        acks.merge(got)
        check_database(db, acks)
    assert acks.memories or acks.messages, "the writer was killed before writing anything"


def test_edit_cut_between_text_and_vector_leaves_it_pending(tmp_path, monkeypatch):
    """edit_memory commits the new text, then the new vector: a crash between the two must not
    leave the old text's vector marked current (it would be found by the old meaning forever)."""
    from engine import HashEmbedder, open_engine
    from tests.stress.workers import sha

    db = tmp_path / "edit.db"
    eng = open_engine(db, embedder=HashEmbedder(), actor="t")
    mid = eng.add_memory("the deploy runs on fridays")

    def crash(*a, **k):
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(eng.memories, "embed_one", crash)
    with pytest.raises(KeyboardInterrupt):
        eng.memories.edit(mid, "backups are verified nightly")
    eng.store.conn.close()
    acks = Acks(memories={mid: {sha("backups are verified nightly")}})
    check_database(db, acks)
    with open_engine(db, embedder=None) as e:
        assert e.memories.get(mid).embedded is False and e.memories.pending_vectors() == 1


def test_acks_accept_both_states_of_an_unacknowledged_intent(tmp_path):
    """The checker itself: a kill between intent and acknowledgement leaves either state."""
    from tests.stress.harness import read_acks

    (tmp_path / "a").write_text("READY\nM 1 aaa\nJ 1 core\nT 1 core\nG 7\n")
    (tmp_path / "b").write_text("READY\nI 1 bbb\nJ 1 archived\nM 2 x\nJ 2 core\nT 2 c")  # cut line
    (tmp_path / "c").write_text("READY\nE 1 ccc\nT 1 active\n")
    acks = Acks()
    acks.merge(read_acks(tmp_path / "a"))
    acks.merge(read_acks(tmp_path / "b"))
    assert acks.memories == {1: {"aaa", "bbb"}, 2: {"x"}} and acks.messages == {7}
    assert acks.tiers[1] >= {"core", "archived"} and acks.tiers[2] == {"active", "core"}
    acks.merge(read_acks(tmp_path / "c"))
    assert acks.memories[1] == {"ccc"} and acks.tiers[1] == {"active"}
