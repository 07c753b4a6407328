"""archive_many / pin_many on PostgreSQL: the same per-id outcomes and audit rows as SQLite."""

from __future__ import annotations

from engine import FixedClock, HashEmbedder, open_engine


def test_archive_and_pin_many_on_postgres(pg_url):
    eng = open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock("2026-01-01T00:00:00Z"), actor="pg")
    try:
        a, b = (eng.add_memory(f"fact {w} about zebras", dedup=False) for w in ("one", "two"))
        out = eng.memories.archive_many([a, b, 404], reason="triage")
        assert [o.outcome for o in out] == ["done", "done", "missing"]
        assert eng.memories.pin_many([a, a], reason="keep")[0].outcome == "done"
        assert eng.memories.get(a).tier == "archived" and eng.memories.get(a).pinned
        acts = [
            (e.action, int(e.target_id)) for e in eng.audit.log(limit=100) if e.reason in ("triage", "keep")
        ]
        assert sorted(acts) == sorted([("archive", a), ("archive", b), ("pin", a)])
        assert len(eng.search("zebras", k=10, mode="keyword").hits) == 0  # archived: out of default search
        assert eng.audit.verify().ok
    finally:
        eng.close()
