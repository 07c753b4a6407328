"""Retrieval that depends on meaning (the real model), the in-memory vector matrix staying equal
to the file, and score-aware fusion / session context being what explain reports."""

from __future__ import annotations

import numpy as np
import pytest

from engine import HashEmbedder, open_engine
from engine.retrieval.filters import Filters
from engine.retrieval.vector_matrix import VectorMatrix
from tests.direct_sql import direct

pytestmark = pytest.mark.backends

FILLER = [
    "The deploy pipeline runs integration tests before every release",
    "Staging database backups are kept for fourteen days",
    "The user's cat is called Miso and sleeps on the keyboard",
    "Invoices are sent on the first working day of each month",
    "The team standup happens at 09:30 in the small meeting room",
    "Use ripgrep rather than grep for searching the monorepo",
    "The office plants get watered on Fridays",
    "Rust builds are cached in the shared sccache bucket",
]


def test_paraphrase_found_by_meaning(real_eng):
    """No shared content word: only the vector side can connect 'colour theme' to 'dark mode'."""
    real_eng.add_memories([{"content": t} for t in FILLER], dedup=False)
    target = real_eng.add_memory("The user prefers dark mode in every editor")
    res = real_eng.search("which colour theme does the user like", k=5, record_access=False)
    assert res.mode == "hybrid"
    assert res.hits[0].id == target
    assert res.hits[0].breakdown.vector_rank == 1


def test_filters_inside_both_retrievers_return_k_rows(real_eng):
    """A filter that keeps a small minority still yields k hits from each retriever: it is
    applied inside the KNN and the FTS query, never after the limit."""
    items = [
        {"content": f"deploy note {i}: the release train leaves on time", "agent": "bulk"} for i in range(60)
    ]
    items += [
        {"content": f"deploy note {i} for the rare agent about releases", "agent": "rare"} for i in range(6)
    ]
    real_eng.add_memories(items, dedup=False)
    for mode in ("keyword", "vector"):
        res = real_eng.search("deploy release", k=5, agent="rare", mode=mode, record_access=False)
        assert len(res.hits) == 5, mode
        assert {h.agent for h in res.hits} == {"rare"}


def _exact(eng, q, k, filters):
    return eng.vectors.knn_sql(q, k, filters)


def _same(got, want):
    """Same similarities in the same order, and every id truly scores what it claims (ties may
    be listed in either order)."""
    assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
    assert {m for m, s in got if s > want[-1][1] + 1e-5} == {m for m, s in want if s > want[-1][1] + 1e-5}


def test_matrix_equals_vec0_and_follows_other_connections(tmp_path, clock):
    """The matrix answers exactly what vec0 answers, and picks up inserts, tier changes and
    deletions committed by another engine on the same file before its next search."""
    path = tmp_path / "m.db"
    emb = HashEmbedder()
    a = open_engine(path, embedder=emb, clock=clock, actor="a")
    b = open_engine(path, embedder=emb, clock=clock, actor="b")
    try:
        rng = np.random.default_rng(7)
        words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
        a.add_memories(
            [
                {"content": " ".join(rng.choice(words, 5)) + f" {i}", "agent": "x" if i % 3 else "y"}
                for i in range(120)
            ],
            dedup=False,
        )
        a.vectors.keep_in_memory()
        q = emb.embed(["alpha gamma sigma"])[0]
        f_all, f_y = Filters(), Filters(agent="y")
        for f in (f_all, f_y):
            _same(a.vectors.knn(q, 10, f), _exact(a, q, 10, f))
        # another connection writes: a new close memory, an archive, a hard delete
        new_id = b.add_memory("alpha gamma sigma", agent="y", dedup=False)
        top_old = _exact(a, q, 1, f_all)[0][0]
        archived = top_old if top_old != new_id else 1
        b.memories.archive(archived)
        # a narrow filter (scored over its own rows only) sees the archive at once
        assert [m for m, _ in a.vectors.knn(q, 5, Filters(tiers=("archived",)))] == [archived]
        victim = _exact(a, q, 3, f_y)[-1][0]
        b.store.write(lambda c: direct(c).execute("DELETE FROM memories WHERE id = ?", (victim,)))
        got = a.vectors.knn(q, 10, f_y)
        assert got[0][0] == new_id
        assert victim not in [m for m, _ in got]
        _same(got, _exact(a, q, 10, f_y))
        assert a.vectors.rank_of(q, new_id, f_y)[0] == 1
    finally:
        a.close()
        b.close()


def test_bit_candidates_rescored_exactly(tmp_path, clock):
    """Past bits_from the matrix takes candidates by sign-bit Hamming distance and rescores
    them: similarities are exact, a stored vector finds itself first, filters still hold."""
    emb = HashEmbedder()
    eng = open_engine(tmp_path / "b.db", embedder=emb, clock=clock)
    try:
        texts = [f"memo {i} on topic {i % 17} with detail {i * 7 % 31}" for i in range(400)]
        eng.add_memories(
            [{"content": t, "agent": "a" if i % 2 else "b"} for i, t in enumerate(texts)], dedup=False
        )
        eng.vectors.keep_in_memory()
        m = eng.vectors.matrix
        for i in (3, 150, 399):
            q = emb.embed([texts[i]])[0]
            got = m.knn(q, 5, Filters(), bits_from=1, rescore=50)
            assert got[0][1] == pytest.approx(1.0, abs=1e-5)
            exact = dict(_exact(eng, q, 400, Filters()))
            assert all(abs(exact[mid] - sim) < 1e-5 for mid, sim in got)
            only_a = m.knn(q, 5, Filters(agent="a"), bits_from=1, rescore=50)
            assert {eng.memories.get(mid).agent for mid, _ in only_a} == {"a"}
    finally:
        eng.close()


def test_matrix_reloads_when_log_was_pruned(tmp_path, clock):
    eng = open_engine(tmp_path / "p.db", embedder=HashEmbedder(), clock=clock)
    try:
        eng.add_memories([{"content": f"note {i} about kiwis"} for i in range(5)], dedup=False)
        m = VectorMatrix(eng.store.vector_store, eng.store.feed)
        with eng.store.reading() as c:
            m.sync(c)
        assert m.n == 5
        eng.add_memories([{"content": f"later note {i} about figs"} for i in range(3)], dedup=False)
        # simulate another process's pruning past what this matrix has applied
        eng.store.write(lambda c: direct(c).execute("DELETE FROM vector_changes"))
        eng.add_memory("fig jam recipe", dedup=False)
        with eng.store.reading() as c:
            m.sync(c)
        assert m.n == 9 and int(m.alive[: m.n].sum()) == 9
    finally:
        eng.close()


def test_batched_dedup_matches_per_item_dedup(tmp_path, clock):
    """A big batch checks near-duplicates against the matrix; the outcome equals the per-item
    vec0 path: duplicates of stored memories and of earlier items in the batch are reinforced."""
    emb = HashEmbedder()
    stored = [f"the build cache lives in bucket number {i}" for i in range(40)]
    batch = stored[:10] + [f"a brand new fact {i} about parsers" for i in range(30)] + stored[:2]
    outcomes = []
    for name, from_ in (("matrix", 1), ("vec0", 10_000)):
        eng = open_engine(tmp_path / f"{name}.db", embedder=emb, clock=clock)
        try:
            from dataclasses import replace

            eng.settings = replace(eng.settings, search=replace(eng.settings.search, dedup_matrix_from=from_))
            first = eng.add_memories([{"content": t} for t in stored], dedup=False)
            res = eng.memories.add_many_ex([{"content": t} for t in batch])
            assert (eng.vectors.matrix is not None) == (name == "matrix")
            outcomes.append([(r.deduplicated, r.id if r.deduplicated else None) for r in res])
            assert [r.id for r in res[:10]] == first[:10]
        finally:
            eng.close()
    assert outcomes[0] == outcomes[1]
    flags = [d for d, _ in outcomes[0]]
    assert all(flags[:10]) and all(flags[-2:])
    assert not all(flags[10:40])


def test_session_neighbour_lifts_the_answer_turn(tmp_path, clock):
    """The answer turn shares no word with the question; the turn before it does. Session
    context brings the answer up in hybrid search, and explain's breakdown says so."""
    eng = open_engine(tmp_path / "s.db", embedder=HashEmbedder(), clock=clock)
    try:
        noise = [
            {"content": f"unrelated chatter number {i} about weather", "session_id": "n"} for i in range(30)
        ]
        eng.add_memories(noise, dedup=False)
        ids = eng.add_memories(
            [
                {"content": "Mel: which telescope did you buy for the meteor shower?", "session_id": "s1"},
                {"content": "Caro: a small Dobsonian, eight inch aperture", "session_id": "s1"},
            ],
            dedup=False,
        )
        res = eng.search("telescope meteor shower", k=5, mode="hybrid", record_access=False)
        by_id = {h.id: h for h in res.hits}
        assert ids[1] in by_id
        assert by_id[ids[1]].breakdown.context > 0
        assert "session context" in eng.explain("telescope meteor shower", ids[1], k=5).summary
        # outside hybrid there is no session context
        kw = eng.search("telescope meteor shower", k=5, mode="keyword", record_access=False)
        assert all(h.breakdown.context == 0 for h in kw.hits)
    finally:
        eng.close()


def test_explain_would_score_matches_search(real_eng):
    """For a memory just outside the top k, explain's would-be score equals what search gives it
    when k is large enough to include it: the fusion formula is the same on both paths."""
    real_eng.add_memories([{"content": t} for t in FILLER], dedup=False)
    q = "how are releases tested and cached"
    wide = real_eng.search(q, k=8, record_access=False).hits
    outside = wide[-1]
    x = real_eng.explain(q, outside.id, k=3)
    assert not x.in_top_k
    assert x.final == pytest.approx(outside.score, abs=1e-5)


def test_common_words_dropped_from_keyword_query_on_big_dbs(eng):
    """A word most memories contain is left out of the MATCH once the db is big enough (lowered
    here), unless it is the only kind of word left; the rare word's best match stays first."""
    from dataclasses import replace

    eng.add_memories(
        [{"content": f"status report {i} for the project"} for i in range(40)]
        + [{"content": "status report about the zeppelin hangar"}],
        dedup=False,
    )
    eng.settings = replace(
        eng.settings, search=replace(eng.settings.search, common_terms_from=10, common_term_share=0.5)
    )
    p = eng.retrieval.keyword_plan("status of the zeppelin")
    assert p.terms == ("zeppelin",)
    assert eng.retrieval.keyword_plan("status report").terms in (("status",), ("report",))
    hits = eng.search("status of the zeppelin", k=3, mode="keyword", record_access=False).hits
    assert "zeppelin" in hits[0].content
    x = eng.explain("status of the zeppelin", hits[0].id)
    assert x.bm25_rank == 1 and x.matched_terms == ["zeppelin"]
