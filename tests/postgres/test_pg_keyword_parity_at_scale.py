"""Keyword parity at scale: the corpus figures are cached on big sources and re-read when ids
move, and a LoCoMo slice gives the same keyword top 10 and hybrid recall on both backends (split
from test_pg_keyword_parity)."""

from __future__ import annotations

import pytest

from engine import FixedClock, HashEmbedder, open_engine
from tests.postgres.test_pg_keyword_parity import T0


def test_corpus_figures_are_cached_on_big_sources_and_reread_when_ids_move(pg_url, monkeypatch):
    from engine.storage.postgres import keyword_stats

    pg = open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now")
    try:
        pg.add_memories([{"content": f"deploy note {i}"} for i in range(30)], dedup=False)
        stats = pg.store.keyword.stats
        with pg.store.reading() as c:
            small = stats.get(c, "memories")
            assert stats.get(c, "memories") is not small  # below EXACT_BELOW: read every time
        monkeypatch.setattr(keyword_stats, "EXACT_BELOW", 10)
        with pg.store.reading() as c:
            first = stats.get(c, "memories")
            assert stats.get(c, "memories") is first  # cached
        pg.add_memories([{"content": "deploy again"}], dedup=False)  # 1 new id of 30: under 10%
        with pg.store.reading() as c:
            assert stats.get(c, "memories") is first
        pg.add_memories([{"content": f"deploy more {i}"} for i in range(5)], dedup=False)
        with pg.store.reading() as c:
            again = stats.get(c, "memories")
            assert again is not first and again.n == 36
        monkeypatch.setattr(keyword_stats, "STATS_TTL_S", -1.0)
        with pg.store.reading() as c:
            assert stats.get(c, "memories") is not again  # past the time limit: re-read
    finally:
        pg.close()


def _locomo() -> list[dict]:
    import json
    import os
    from pathlib import Path

    env = os.environ.get("MEMCONSOLE_LOCOMO")
    path = Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo"
    if path.is_dir():
        path = path / "locomo_dev.json"
    if not path.is_file():
        pytest.skip(f"LoCoMo data not found at {path} (set MEMCONSOLE_LOCOMO)")
    return json.loads(path.read_text(encoding="utf-8"))


def test_locomo_slice_keyword_top10_and_hybrid_recall_match_sqlite(pg_url, tmp_path):
    """A fast slice of bench/pg_parity.py (which runs all five conversations with MiniLM): one
    conversation, its first 60 questions, the hash embedder on both sides."""
    conv = _locomo()[1]
    items, n = [], 1
    while f"session_{n}" in conv["conversation"]:
        for t in conv["conversation"][f"session_{n}"]:
            items.append(
                {"content": f"{t['speaker']}: {t['text']}", "session_id": f"s{n}", "dia": t["dia_id"]}
            )
        n += 1
    questions = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4)][:60]
    sides = []
    for e in (
        open_engine(tmp_path / "l.db", embedder=HashEmbedder(), clock=FixedClock(T0), load="now"),
        open_engine(pg_url, embedder=HashEmbedder(), clock=FixedClock(T0), load="now"),
    ):
        ids = e.add_memories(
            [{"content": i["content"], "session_id": i["session_id"]} for i in items], dedup=False
        )
        pos = {mid: k for k, mid in enumerate(ids)}
        by_dia = {i["dia"]: k for k, i in enumerate(items)}
        kw, found = [], 0
        for q in questions:
            kw.append(
                [pos[h.id] for h in e.search(q["question"], k=10, mode="keyword", record_access=False).hits]
            )
            hy = [pos[h.id] for h in e.search(q["question"], k=10, mode="hybrid", record_access=False).hits]
            found += any(by_dia.get(x) in hy for x in q.get("evidence", []))
        sides.append((kw, found / len(questions)))
        e.close()
    (kw_lite, r10_lite), (kw_pg, r10_pg) = sides
    same = sum(a == b for a, b in zip(kw_lite, kw_pg, strict=True)) / len(questions)
    print(f"keyword top 10 identical {same:.1%}; hybrid R@10 {r10_lite:.3f} vs {r10_pg:.3f}")
    assert same >= 0.99
    assert abs(r10_lite - r10_pg) <= 0.01
