"""The in-memory keyword matrix (engine/retrieval/keyword_matrix.py): a long-lived engine ranks
every query word over every match from postings held in memory. Its scores must be the store's
BM25 to the bit (FTS5's on SQLite, the SQL BM25 on PostgreSQL), its top n the store's unbounded
top n, and it must follow every write — this process's and another's — through the change log."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import replace

import numpy as np
import pytest

from engine import HashEmbedder, open_engine
from engine.config import Settings
from engine.retrieval import keyword_matrix
from engine.retrieval.filters import Filters
from engine.retrieval.query import plan

pytestmark = pytest.mark.backends

WORDS = (
    "alpha", "beta", "gamma", "delta", "deploy", "deploys", "deployed", "server", "database", "backup",
    "restore", "ledger", "invoice", "payment", "refund", "coffee", "tea", "kettle", "garden", "tomato",
    "basil", "runner", "running", "ran", "caf\u00e9", "na\u00efve", "resume", "r\u00e9sum\u00e9",
    "quarterly", "budget", "meeting", "notes",
)  # fmt: skip
AGENTS = ("ops", "coder", "")
QUERIES = (
    "deploy server",
    "backup restore database ledger",
    "running runner",
    "caf\u00e9 resume",
    "coffee tea kettle garden tomato basil",
    "quarterly budget meeting",
    "invoice",
    "nothing-matches-this-zz",
)


def _unbounded() -> Settings:
    """No automatic loads and no cost bounds: the store path is the exact reference."""
    s = Settings()
    return replace(
        s,
        search=replace(
            s.search, matrix_after=0, keyword_matrix_after=0, common_term_share=0.0, keyword_rows=0
        ),
    )


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 14)))


def _seed(eng, n: int, seed: int = 7) -> list[int]:
    rng = random.Random(seed)
    out = eng.add_memories(
        [
            {
                "content": _text(rng),
                "agent": AGENTS[i % 3],
                "category": ("ops", "decision")[i % 2],
                "tier": ("active", "core", "archived")[i % 3],
            }
            for i in range(n)
        ],
        dedup=False,
    )
    return [o.id if hasattr(o, "id") else o for o in out]


@pytest.fixture
def keng(db_path, clock):
    e = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="tester", settings=_unbounded())
    yield e
    e.close()


def _both(eng, query: str, filters: Filters, n: int = 20):
    """(matrix ranks, store ranks) for the same plan."""
    kr = eng.retrieval.keyword
    p = plan(query)
    got = kr.ranks(p, filters, n)
    m, kr.matrix = kr.matrix, None
    try:
        want = kr.ranks(p, filters, n)
    finally:
        kr.matrix = m
    return got, want


def _same_ranking(got: dict, want: dict, exact: bool) -> None:
    """The same memories in the same order with equal scores (ties at the cut go to the newer
    memory on both paths)."""
    g = sorted((r, m, s) for m, (r, s) in got.items())
    w = sorted((r, m, s) for m, (r, s) in want.items())
    assert [m for _, m, _ in g] == [m for _, m, _ in w]
    if exact:
        assert [s for *_, s in g] == [s for *_, s in w]
    else:
        assert [s for *_, s in g] == pytest.approx([s for *_, s in w], rel=1e-12, abs=0)


def _assert_same(eng, filters: Filters | None = None, n: int = 20, exact: bool = False) -> int:
    filters = filters or Filters()
    compared = 0
    for q in QUERIES:
        got, want = _both(eng, q, filters, n)
        _same_ranking(got, want, exact)
        compared += len(want)
    return compared


def test_scores_are_the_stores_bm25_for_every_word_and_every_match(keng, db_path, clock):
    _seed(keng, 400)
    keng.retrieval.keyword.keep_in_memory()
    assert keng.retrieval.keyword.matrix is not None
    assert _assert_same(keng) > 60
    filters = (Filters(tiers=("archived",)), Filters(agent="coder", category="ops"), Filters(agent="nobody"))
    for f in filters:
        _assert_same(keng, f)
    # with the vector matrix loaded too, its masks check the candidates' filters: same answers,
    # also for memories it has no row for (written without a vector)
    keng.vectors.keep_in_memory()
    bare = open_engine(db_path, embedder=None, clock=clock, actor="no-model", settings=_unbounded())
    try:
        bare.add_memory("deploy server ledger invoice", agent="coder", category="ops")
    finally:
        bare.close()
    assert keng.vectors.live_matrix() is not None
    for f in filters:
        _assert_same(keng, f)


@pytest.mark.sqlite_only("FTS5's bm25() is the reference here; PostgreSQL's equality is the test above")
def test_sqlite_scores_equal_fts5_to_the_bit(keng):
    _seed(keng, 200)
    kr = keng.retrieval.keyword
    kr.keep_in_memory()
    assert _assert_same(keng, n=200, exact=True) > 200  # every match: no cut, ids and bits equal
    for q in QUERIES:
        got, want = _both(keng, q, Filters(), 200)
        assert {m: s for m, (_, s) in got.items()} == {m: s for m, (_, s) in want.items()}


def test_it_follows_writes_edits_deletes_and_another_process(keng, db_path, clock):
    ids = _seed(keng, 150)
    kr = keng.retrieval.keyword
    kr.keep_in_memory()
    m = kr.matrix
    _seed(keng, 40, seed=11)  # written after the load
    keng.memories.edit(ids[0], "deploy deploy deploy server server ledger", reason="test")
    keng.forget.run("memory", [ids[2]], "user asked")
    other = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="other", settings=_unbounded())
    try:
        _seed(other, 25, seed=12)
        other.memories.edit(ids[3], "quarterly budget meeting quarterly", reason="test")
    finally:
        other.close()
    _assert_same(keng)
    assert kr.matrix is m, "small changes are applied, not reloaded"
    assert len(m.extra) >= 40
    top = keng.retrieval.keyword.ranks(plan("deploy server ledger"), Filters(), 5)
    assert min(top, key=lambda i: top[i][0]) == ids[0]  # the edit ranks first
    assert ids[2] not in kr.ranks(plan(keng.memories.get(ids[4]).content), Filters(), 500)


def _wait_for_matrix(kr, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while (kr.matrix is None or kr.loader.loading) and time.monotonic() < deadline:
        time.sleep(0.02)
    return kr.matrix


def test_a_change_burst_reloads_aside_while_the_store_answers(keng, monkeypatch):
    _seed(keng, 120)
    kr = keng.retrieval.keyword
    kr.keep_in_memory()
    old = kr.matrix
    monkeypatch.setattr(keyword_matrix, "RELOAD_FROM", 10)
    _seed(keng, 60, seed=3)
    p = plan("deploy server")
    assert kr._matrix_top(p, Filters(), 10) is None  # too far behind: the store answers meanwhile
    m = _wait_for_matrix(kr)
    assert m is not None and m is not old and not m.extra and m.alive.all()  # reloaded aside
    _assert_same(keng)


def test_a_forgotten_memorys_words_and_vector_leave_the_process(keng):
    _seed(keng, 80)
    secret = keng.add_memory("zyzzyva quokka deploy", agent="ops")
    secret_id = secret.id if hasattr(secret, "id") else secret
    kr = keng.retrieval.keyword
    kr.keep_in_memory()
    keng.vectors.keep_in_memory()
    m, vm = kr.matrix, keng.vectors.matrix
    assert "zyzzyva" in m.at and secret_id in vm.row
    j = int(np.searchsorted(m.ids, secret_id))
    row = vm.row[secret_id]
    keng.forget.run("memory", [secret_id], "user asked")
    assert kr.ranks(plan("zyzzyva quokka"), Filters(), 10) == {}
    assert keng.vectors.live_matrix() is vm
    assert "zyzzyva" not in m.at and "quokka" not in m.at and "zyzzyva" not in m.names
    assert "deploi" in m.at  # "deploy" stemmed: other memories still hold it
    assert not m.tfs[m.slots == j].any()
    assert not vm.mat[row].any() and not vm.bits[:, row].any()
    _assert_same(keng)


def test_a_phrase_word_goes_to_the_store_and_the_bounds_return_without_a_matrix(keng):
    _seed(keng, 60)
    keng.add_memory("met o'neil at the garden", agent="ops")
    kr = keng.retrieval.keyword
    kr.keep_in_memory()
    assert keyword_matrix.lexemes_of(["o'neil"]) is None  # two lexemes: a phrase
    got, want = _both(keng, "o'neil garden", Filters())
    assert got == want and got


def test_with_the_matrix_no_word_is_left_out_as_too_common(db_path, clock):
    s = Settings()
    s = replace(
        s, search=replace(s.search, common_terms_from=10, common_term_share=0.1, keyword_matrix_after=0)
    )
    eng = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="tester", settings=s)
    try:
        _seed(eng, 80)
        eng.add_memory("the rare zebra and the common deploy", agent="ops")
        kr = eng.retrieval.keyword
        assert kr.plan("zebra deploy").dropped  # a one-shot engine bounds the cost
        kr.keep_in_memory()
        p = kr.plan("zebra deploy")
        assert not p.dropped and p.terms == ("zebra", "deploy")
        res = eng.search("zebra deploy", mode="keyword", record_access=False)
        assert res.keyword_scope == [] and res.hits[0].content.startswith("the rare zebra")
    finally:
        eng.close()


def test_searches_load_it_in_the_background(db_path, clock):
    s = Settings()
    s = replace(s, search=replace(s.search, keyword_matrix_after=2, matrix_after=0))
    eng = open_engine(db_path, embedder=HashEmbedder(), clock=clock, actor="tester", settings=s)
    try:
        _seed(eng, 50)
        kr = eng.retrieval.keyword
        eng.search("deploy", mode="keyword", record_access=False)
        assert kr.matrix is None
        eng.search("deploy", mode="keyword", record_access=False)
        deadline = time.monotonic() + 20
        while kr.matrix is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert kr.matrix is not None
        assert all(t.name != "keyword-matrix-load" for t in threading.enumerate()) or kr.matrix
        first = eng.search("deploy server", mode="keyword", record_access=False)
        kr.matrix = None
        again = eng.search("deploy server", mode="keyword", record_access=False)
        assert [h.id for h in first.hits] == [h.id for h in again.hits]
    finally:
        eng.close()
