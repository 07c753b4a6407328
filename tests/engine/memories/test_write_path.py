"""The write path: validation, audit, near-duplicate reinforcement, back-filled vectors."""

import pytest

from engine import HashEmbedder, InvalidInput, NotFound, open_engine
from tests.direct_sql import direct

pytestmark = pytest.mark.backends


def test_add_stores_every_field_and_audits(eng):
    mid = eng.add_memory(
        "Deploys happen on Tuesdays",
        kind="procedural",
        category="decision",
        agent="atlas",
        user="dana",
        importance=0.8,
        metadata={"src": "chat"},
    )
    m = eng.memories.get(mid)
    assert (m.kind, m.category, m.tier, m.agent, m.user, m.importance) == (
        "procedural",
        "decision",
        "active",
        "atlas",
        "dana",
        0.8,
    )
    assert m.metadata == {"src": "chat"} and m.embedded and m.strength == 1.0
    rows = direct(eng.store).all("SELECT action, actor, target_id FROM audit WHERE target_kind = 'memory'")
    assert [tuple(r) for r in rows] == [("add", "tester", str(mid))]


@pytest.mark.parametrize(
    "bad, msg",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("a\x00b", "NUL"),
        ("x\ud800y", "surrogate"),
        (42, "text"),
    ],
)
def test_add_refuses_bad_content_cleanly(eng, bad, msg):
    with pytest.raises(InvalidInput, match=msg):
        eng.add_memory(bad)
    assert direct(eng.store).one("SELECT count(*) FROM memories")[0] == 0


@pytest.mark.parametrize("field, value", [("kind", "dream"), ("tier", "hot"), ("importance", 3)])
def test_add_refuses_bad_fields(eng, field, value):
    with pytest.raises(InvalidInput):
        eng.add_memory("fine text", **{field: value})


def test_batch_is_validated_before_anything_is_written(eng):
    with pytest.raises(InvalidInput):
        eng.add_memories([{"content": "good one"}, {"content": ""}])
    assert direct(eng.store).one("SELECT count(*) FROM memories")[0] == 0


def test_exact_duplicate_reinforces_instead_of_inserting(eng, clock):
    a = eng.add_memory("The build cache lives on the shared volume", agent="atlas")
    clock.advance(86400 * 10)
    r = eng.memories.add_ex("The build cache lives on the shared volume", agent="atlas")
    assert r.deduplicated and r.id == a
    m = eng.memories.get(a)
    assert m.access_count == 1 and m.last_reinforced_at == clock.now()
    # another agent's identical memory is its own
    assert not eng.memories.add_ex("The build cache lives on the shared volume", agent="scout").deduplicated
    # dedup=False always inserts
    assert eng.add_memory("The build cache lives on the shared volume", agent="atlas", dedup=False) != a


def test_near_duplicate_by_meaning_with_the_real_model(real_eng):
    a = real_eng.add_memory("The user prefers dark mode in every editor", agent="atlas")
    r = real_eng.memories.add_ex("The user prefers dark mode in every editor.", agent="atlas")
    assert r.deduplicated and r.id == a
    other = real_eng.memories.add_ex("The user prefers light mode in the terminal", agent="atlas")
    assert not other.deduplicated


def test_batch_dedups_within_itself(eng):
    ids = eng.add_memories(
        [
            {"content": "same words here"},
            {"content": "same words here"},
            {"content": "different words entirely"},
        ]
    )
    assert ids[0] == ids[1] != ids[2]


def test_archived_memories_are_not_dedup_targets(eng):
    a = eng.add_memory("old fact about backups")
    eng.memories.archive(a)
    assert eng.add_memory("old fact about backups") != a


def test_vectors_backfilled_when_model_arrives(db_path, clock):
    e = open_engine(db_path, embedder=None, clock=clock)
    mid = e.add_memory("written while keyword-only")
    assert e.memories.pending_vectors() == 1 and not e.memories.get(mid).embedded
    e.close()
    e2 = open_engine(db_path, embedder=HashEmbedder(), clock=clock)  # ready at once -> backfill
    assert e2.memories.pending_vectors() == 0 and e2.memories.get(mid).embedded
    assert e2.search("keyword-only", mode="vector").hits[0].id == mid
    e2.close()


def test_operator_edits_are_audited(eng):
    mid = eng.add_memory("tweakable")
    eng.memories.pin(mid, reason="keep")
    eng.memories.set_importance(mid, 0.9)
    eng.memories.archive(mid)
    eng.memories.edit(mid, "tweaked")
    m = eng.memories.get(mid)
    assert m.pinned and m.importance == 0.9 and m.tier == "archived" and m.content == "tweaked"
    actions = [
        r[0]
        for r in direct(eng.store).all(
            "SELECT action FROM audit WHERE target_id = ? ORDER BY id", (str(mid),)
        )
    ]
    assert actions == ["add", "pin", "set-importance", "archive", "edit"]
    with pytest.raises(NotFound):
        eng.memories.pin(999999)
    with pytest.raises(InvalidInput):
        eng.memories.set_importance(mid, 2)


def test_batches_store_each_memorys_own_vector(eng):
    """Across batches every memory gets its own vector, and dedup across batches holds."""
    import hashlib

    words = [hashlib.md5(str(i).encode()).hexdigest() for i in range(230)]
    items = [{"content": f"{w[:8]} {w[8:16]} {w[16:24]} {w[24:]}"} for w in words]
    items += [dict(items[5])]  # twin of item 5, in batch 5
    ids = eng.add_memories(items, batch_size=50)
    assert len(set(ids)) == 230 and ids[-1] == ids[5]
    emb = HashEmbedder()
    for i in (0, 49, 50, 199, 229):
        q = emb.embed([items[i]["content"]])[0]
        assert eng.vectors.similarities(q, [ids[i]])[ids[i]] == pytest.approx(1.0, abs=1e-5)


def test_batches_fail_at_the_bad_batch_in_order(eng):
    """A bad item in batch 3 of 4: batches 1-2 are written, nothing of 3-4, and the error names
    the field."""
    items = [{"content": f"memory {i}"} for i in range(400)]
    items[250] = {"content": "x", "importance": 7}
    with pytest.raises(InvalidInput, match="importance"):
        eng.add_memories(items, dedup=False, batch_size=100)
    assert direct(eng.store).one("SELECT count(*) FROM memories")[0] == 200
