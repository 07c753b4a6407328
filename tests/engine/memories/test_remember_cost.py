"""Issue #24: an agent's remember does no work it does not need. Right after a recall caught the
matrices up, a small write opens no read snapshot of its own (the duplicate check reads what
changed since inside the write), never reads its new row back, and marks the memory embedded in
its INSERT rather than a second UPDATE — and the memory is still found, deduplicated and searched
through the matrix exactly as before."""

from __future__ import annotations

import pytest

from engine import HashEmbedder, open_engine
from engine.storage.gateways.memories import MemoryRows

pytestmark = pytest.mark.backends


def test_small_remember_after_a_recall_skips_the_extra_reads(db_path, clock, monkeypatch):
    eng = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="tester")
    try:
        eng.add_memories(
            [{"content": f"note {i}: deploy the staging cluster {i}", "agent": "a"} for i in range(30)]
        )
        eng.vectors.keep_in_memory()
        eng.search("deploy staging", k=5, agent="a")  # catches the matrix up
        calls: list[str] = []
        real_reading = type(eng.store).reading

        def reading(self):  # a read snapshot opened by this thread
            calls.append("reading")
            return real_reading(self)

        for name in ("row", "set_embedded"):
            real = getattr(MemoryRows, name)
            monkeypatch.setattr(
                MemoryRows,
                name,
                lambda self, *a, _n=name, _r=real, **k: (calls.append(_n), _r(self, *a, **k))[1],
            )
        monkeypatch.setattr(type(eng.store), "reading", reading)
        mid = eng.add_memory("rotate the vault key on mondays", agent="a")
        again = eng.add_memory("rotate the vault key on mondays", agent="a")  # a near-duplicate
        assert calls == []
        monkeypatch.undo()
        assert again == mid  # reinforced, not stored twice
        got = eng.memories.get(mid)
        assert got.embedded
        hits = eng.search("rotate the vault key", k=3, agent="a", record_access=False).hits
        assert hits and hits[0].id == mid
        assert eng.vectors.matrix is not None and mid in eng.vectors.matrix.row  # synced from the feed
    finally:
        eng.close()
