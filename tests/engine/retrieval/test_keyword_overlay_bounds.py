"""Issue 22 (Trust), the long-lived keyword overlay (engine/retrieval/keyword_matrix.py): its cost
is bounded — a burst of huge memories from another process is never tokenized in a searcher's
thread — and a word forgotten or edited away by another process leaves its dictionary."""

from __future__ import annotations

import threading

import pytest

from engine import HashEmbedder, open_engine
from engine.retrieval import keyword_matrix
from engine.retrieval.filters import Filters
from engine.retrieval.query import plan
from tests.engine.retrieval.test_keyword_matrix import _assert_same, _seed, _unbounded, _wait_for_matrix

pytestmark = pytest.mark.backends


@pytest.fixture
def keng(db_path, clock):
    e = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="tester", settings=_unbounded())
    yield e
    e.close()


def _other(db_path, clock):
    return open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="other", settings=_unbounded())


def _search(eng, q: str) -> dict:
    return eng.retrieval.keyword.ranks(plan(q), Filters(), 10)


def _dictionary(m) -> set[str]:
    return set(m.at) | set(m.extra_at)


def test_words_another_process_forgets_or_edits_away_leave_the_dictionary(keng, db_path, clock):
    _seed(keng, 60)
    held = keng.add_memory("zyzzyva quokka deploy", agent="ops")
    kr = keng.retrieval.keyword
    kr.keep_in_memory()
    m = kr.matrix
    with _other(db_path, clock) as other:
        late = other.add_memory("xylograph wombat deploy", agent="ops")
    assert _search(keng, "xylograph") and "xylograph" in m.extra_at  # into the overlay
    with _other(db_path, clock) as other:
        other.forget.run("memory", [late], "user asked")
        other.memories.edit(held, "deploy the server", reason="words edited away")
    assert _search(keng, "xylograph wombat zyzzyva quokka") == {}
    assert kr.matrix is m, "applied, not reloaded"
    gone = {"xylograph", "wombat", "zyzzyva", "quokka"}
    assert not gone & _dictionary(m), gone & _dictionary(m)
    assert "deploi" in _dictionary(m)  # still held by others
    _assert_same(keng)


def test_a_burst_of_huge_memories_is_never_tokenized_in_the_searchers_thread(
    keng, db_path, clock, monkeypatch
):
    _seed(keng, 80)
    kr = keng.retrieval.keyword
    kr.keep_in_memory()
    old = kr.matrix
    monkeypatch.setattr(keyword_matrix, "SYNC_MAX_CHARS", 50_000)
    tokenized_in: list[str] = []
    real = keyword_matrix.counted

    def counted(text: str):
        tokenized_in.append(threading.current_thread().name)
        return real(text)

    monkeypatch.setattr(keyword_matrix, "counted", counted)
    with _other(db_path, clock) as other:
        texts = [{"content": "ledger invoice " * 2_000 + f"burstword{i}"} for i in range(8)]  # 30 kB each
        big = [r.id for r in other.memories.add_many_ex(texts, dedup=False)]
    hits = _search(keng, "burstword3")  # the store answers meanwhile
    assert list(hits) == [big[3]] and tokenized_in == []
    m = _wait_for_matrix(kr)
    assert m is not None and m is not old and not m.extra and m.extra_chars == 0  # folded in aside
    assert list(_search(keng, "burstword5")) == [big[5]]
    _assert_same(keng)


def test_the_overlay_holds_at_most_its_bound_of_text(keng, db_path, clock, monkeypatch):
    _seed(keng, 80)
    kr = keng.retrieval.keyword
    kr.keep_in_memory()
    monkeypatch.setattr(keyword_matrix, "OVERLAY_MAX_CHARS", 20_000)
    seen = []
    with _other(db_path, clock) as other:
        for i in range(12):  # each sync is small; together they pass the overlay's bound
            other.memories.add_ex("tomato basil garden " * 100 + f"steadyword{i}", dedup=False)
            _search(keng, f"steadyword{i}")
            if kr.matrix is not None:
                seen.append(kr.matrix.extra_chars)
    assert max(seen) <= 20_000 and _wait_for_matrix(kr) is not None
    assert list(_search(keng, "steadyword11"))
    _assert_same(keng)
