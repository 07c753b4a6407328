"""The PostgreSQL adapter's own parts (keyword and trigram index, vector store, doctor's checks and
repair) run PostgreSQL's own SQL: on a database with none of the SQLite imitation older versions
installed (json_extract, instr, scalar max/min, sum(boolean), text-vs-number
operators) every one of them still answers. Rows are written here with plain SQL, the store's
write tokenizing them into the keyword index as for the engine."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from engine.retrieval.filters import Filters
from engine.storage.indexes import MessageScope
from engine.storage.postgres import schema
from engine.storage.postgres.connection import PgConnection
from engine.storage.postgres.store import PgStore
from engine.types import TIERS

TEXTS = [
    ("deploy the staging cluster on friday", "active", "ops", "ana"),
    ("the deploy script needs a dry run flag", "active", "ops", "bob"),
    ("東京タワーで会いましょう", "archived", "", "ana"),
    ("lunch at noon near the tower", "active", "", "bob"),
]


def _unit(seed: int) -> bytes:
    v = np.random.default_rng(seed).standard_normal(schema.EMBED_DIM).astype(np.float32)
    return (v / np.linalg.norm(v)).astype(np.float32).tobytes()


@pytest.fixture
def store(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[PgStore]:
    s = PgStore(pg_url, pool_size=2)
    try:
        s.reconcile()

        def fill(conn: PgConnection) -> list[int]:
            ids = []
            conn.execute("INSERT INTO sessions(id, title, agent) VALUES ('s1', 'standup', 'ana')")
            for i, (text, tier, agent, user) in enumerate(TEXTS):
                mid = conn.execute(
                    'INSERT INTO memories(content, tier, agent, "user", embedded) VALUES (%s, %s, %s, %s, 1)'
                    " RETURNING id",
                    [text, tier, agent, user],
                ).fetchone()[0]
                s.vector_store.put(conn, mid, _unit(i), tier, "semantic", "general", agent, user)
                conn.execute(
                    "INSERT INTO messages(session_id, role, content, at) VALUES ('s1', 'user', %s, %s)",
                    [text, float(i)],
                )
                ids.append(int(mid))
            conn.execute("INSERT INTO rules(text) VALUES ('always deploy with a dry run first')")
            return ids

        s.ids = s.write(fill)  # type: ignore[attr-defined]
        yield s
    finally:
        s.close()


def test_the_keyword_index_answers_without_the_emulation(store):
    kw, ids = store.keyword, store.ids
    with store.reading() as c:
        top = kw.top(c, "words", '"deploy"', 10)
        assert sorted(i for i, _ in top) == sorted(ids[:2])
        assert kw.doc_freq(c, '"deploy" OR "tower"') == 3
        assert [
            i for i, _ in kw.top_where(c, "words", '"deploy"', Filters(TIERS, agent="ops", user="bob"), 10)
        ] == [ids[1]]
        assert kw.top_where(c, "words", '"deploy"', Filters(()), 10) == []
        assert kw.passing(c, ids, Filters(("active",))) == {ids[0], ids[1], ids[3]}
        assert kw.has(c, "words", '"dry run"', ids[1]) and not kw.has(c, "words", '"dry run"', ids[0])
        assert kw.rank_of(c, "words", '"deploy"', Filters(TIERS), ids[1])[1] == 2
        assert kw.score_of(c, "words", '"deploy"', ids[0]) is not None
        assert kw.contains(c, ids[2], "タワー")
        assert "deploi" in kw.postings(c).lexemes  # porter-stemmed, as FTS5
        assert [i for i, _ in kw.top(c, "trigram", '"タワー"', 10)] == [ids[2]]
        assert kw.top_where(c, "trigram", '"タワー"', Filters(("active",)), 10) == []
        rows = kw.messages(c, "words", '"deploy"', MessageScope("s1", "ana"), 10)
        assert len(rows) == 2 and rows[0]["session_title"] == "standup"
        assert len(kw.messages(c, "trigram", '"タワー"', MessageScope("s1"), 10)) == 1
        assert len(kw.match_ids(c, "rules", '"deploy"', 5)) == 1


def test_the_vector_store_answers_without_the_emulation(store):
    vs, ids = store.vector_store, store.ids
    with store.reading() as c:
        knn = vs.knn(c, _unit(0), 3, Filters(TIERS))
        assert knn[0][0] == ids[0] and knn[0][1] == pytest.approx(0.0, abs=1e-6)
        assert {i for i, _ in vs.knn(c, _unit(0), 10, Filters(("active",), user="bob"))} == {ids[1], ids[3]}
        assert vs.count_closer(c, _unit(0), 2.0, Filters(TIERS)) == 4
        assert dict(vs.distances(c, _unit(1), ids[:2]))[ids[1]] == pytest.approx(0.0, abs=1e-6)
        assert vs.embedding(c, ids[2]) == _unit(2)
        assert [e[0] for e in vs.entries(c, [ids[3], ids[0]])] == [ids[3], ids[0]]
        assert sum(len(b) for b in vs.scan(c)) == 4


def test_doctor_checks_and_repair_run_without_the_emulation(store):
    h = store.health
    with store.reading() as c:
        assert h.integrity(c) == []
        for name, table in h.keyword_indexes():
            cov = h.coverage(c, name, table, 5)
            assert cov.missing.count == 0 and cov.extra.count == 0, name
        assert h.vector_gaps(c, 5).missing.count == 0
        assert h.number_suspects(c, 5) == []
    store.write(
        lambda c: c.execute(
            "UPDATE memories SET metadata = 'not json', importance = 'NaN' WHERE id = %s", [store.ids[0]]
        )
    )
    with store.reading() as c:
        assert [(t, col) for t, _, col, _, _ in h.json_suspects(c, 5)] == [("memories", "metadata")]
        nan = [(t, col) for t, _, col, v, _ in h.number_suspects(c, 5) if v != v]  # noqa: PLR0124
        assert nan == [("memories", "importance")]
    acts = store.write(h.repair)
    assert "rebuilt full-text indexes" in acts
    assert all(ok for ok, _ in [h.index_integrity(n) for n, _ in h.keyword_indexes()])
