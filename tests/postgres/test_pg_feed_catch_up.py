"""A recall's matrices catch up with other agents' writes in one statement (issue #24): the feed's
head brings the log's entries, the changed vectors, the changed contents and the model tag, and
the matrices then answer exactly as freshly loaded ones; past the read-ahead's bounds (too many
entries, too much text) they ask on their own as before, with the same answers."""

from __future__ import annotations

import threading

import psycopg
import pytest

from engine import HashEmbedder, open_engine
from engine.storage.postgres import feed as pg_feed

SEPARATE_READS = {
    "changed ids": "SELECT DISTINCT memory_id FROM vector_changes",
    "their vectors": "FROM memory_vectors WHERE memory_id = ANY",
    "their length": "sum(length(content)), 0) FROM memories WHERE id = ANY",
    "their contents": "SELECT id, content FROM memories WHERE id = ANY",
    "the tag alone": "SELECT coalesce((SELECT value FROM meta WHERE key = 'vector_model')",
}
HEAD = "min(seq) FROM vector_changes"
QUERIES = ["deploy pipeline", "billing invoice", "canary rollout api", "ticket"]


class Sent:
    """The statements this thread sends (psycopg's cursor: also BEGIN and what is pipelined)."""

    def __init__(self, monkeypatch) -> None:
        self.statements: list[str] = []
        me, real = threading.get_ident(), psycopg.Cursor.execute

        def execute(cur, query, *a, **k):
            if threading.get_ident() == me and isinstance(query, str):
                self.statements.append(" ".join(query.split()))
            return real(cur, query, *a, **k)

        monkeypatch.setattr(psycopg.Cursor, "execute", execute)

    def count(self, text: str) -> int:
        return sum(text in s for s in self.statements)


def answers(eng) -> list[list[tuple[int, float]]]:
    return [[(h.id, h.score) for h in eng.search(q, k=8, record_access=False).hits] for q in QUERIES]


def in_memory(eng) -> None:
    eng.vectors.keep_in_memory()
    eng.retrieval.keyword.keep_in_memory()
    eng.search("deploy pipeline", k=5, record_access=False)


def others_write(other, round_: int) -> None:
    """Another agent's process: new memories, an edit (new words, new vector), an archive (a
    filter field) and a delete (the vector and the words leave)."""
    got = [
        other.add_memory(f"deploy pipeline {round_} runs a canary rollout first", dedup=False),
        other.add_memory(f"billing invoice {round_} goes out on the first", dedup=False),
        other.add_memory(f"ticket {round_}: the api gateway times out", dedup=False),
    ]
    other.memories.edit(got[1], f"billing invoice {round_} now goes out on the fifth, with a ticket")
    other.memories.archive(got[2])
    other.store.conn.execute("DELETE FROM memories WHERE id = %s", [got[0] - 1])


@pytest.fixture
def three(pg_db):
    """A recalling agent with both matrices, another agent writing, and the seed corpus."""
    with (
        open_engine(pg_db, embedder=HashEmbedder()) as eng,
        open_engine(pg_db, embedder=HashEmbedder()) as other,
    ):
        eng.add_memories(
            [{"content": f"deploy pipeline step {i} for the api, ticket {i % 7}"} for i in range(40)]
            + [{"content": f"billing invoice {i} for the ops team"} for i in range(20)],
            dedup=False,
        )
        in_memory(eng)
        yield pg_db, eng, other


def fresh_answers(pg_db) -> list[list[tuple[int, float]]]:
    with open_engine(pg_db, embedder=HashEmbedder()) as fresh:
        in_memory(fresh)  # loaded now: the truth the caught-up matrices must equal
        return answers(fresh)


def test_a_recall_after_other_agents_wrote_catches_up_in_one_statement(three, monkeypatch):
    pg_db, eng, other = three
    for round_ in range(3):
        others_write(other, round_)
        sent = Sent(monkeypatch)
        eng.search("deploy pipeline canary", k=5, record_access=False)
        monkeypatch.undo()
        assert sent.count(HEAD) == 1
        assert {name: sent.count(s) for name, s in SEPARATE_READS.items()} == dict.fromkeys(
            SEPARATE_READS, 0
        ), (
            sent.statements
        )  # were 5 more statements (+ the contents): one each for vectors, keywords and the tag
        assert answers(eng) == fresh_answers(pg_db)
    assert eng.vectors.matrix is not None and eng.retrieval.keyword.matrix is not None  # no reload taken


def test_past_the_entry_bound_the_matrices_read_on_their_own_and_answer_the_same(three, monkeypatch):
    pg_db, eng, other = three
    monkeypatch.setattr(pg_feed, "CATCH_UP_MAX", 3)  # one round of others_write logs more than 3
    others_write(other, 0)
    sent = Sent(monkeypatch)
    eng.search("deploy pipeline canary", k=5, record_access=False)
    assert sent.count(SEPARATE_READS["changed ids"]) == 2  # vectors and keywords each asked
    assert sent.count(SEPARATE_READS["their vectors"]) == 1
    monkeypatch.undo()
    assert answers(eng) == fresh_answers(pg_db)


def test_past_the_text_bound_the_contents_are_not_read_ahead(three, monkeypatch):
    pg_db, eng, other = three
    monkeypatch.setattr(pg_feed, "TEXT_MAX_CHARS", 20)  # less than one new memory's text
    others_write(other, 0)
    sent = Sent(monkeypatch)
    eng.search("deploy pipeline canary", k=5, record_access=False)
    assert sent.count(SEPARATE_READS["their vectors"]) == 0  # the vectors still came with the head
    assert sent.count(SEPARATE_READS["their length"]) == 1  # the keyword matrix measured, then read
    assert sent.count(SEPARATE_READS["their contents"]) == 1
    monkeypatch.undo()
    assert answers(eng) == fresh_answers(pg_db)


def test_outside_a_read_snapshot_nothing_is_read_ahead(three, monkeypatch):
    """A write's own reads (dedup inside the write) and autocommit reads ask the plain head."""
    _, eng, other = three
    others_write(other, 0)
    feed = eng.store.feed
    sent = Sent(monkeypatch)
    top = eng.store.query(lambda c: feed.head(c))
    assert eng.store.query(lambda c: feed.caught_up(c, 0)) is None
    assert top[0] > 0 and sent.count("memory_vectors") == 0 and sent.count("FROM memories") == 0


def test_the_hits_rows_come_from_the_candidates_rows_already_read(three, monkeypatch):
    """The state weighting reads the candidates' whole rows in the recall's snapshot: the hits'
    rows need no statement of their own (was `SELECT * FROM memories WHERE id = ANY` again)."""
    pg_db, eng, other = three
    others_write(other, 0)
    want = answers(eng)
    sent = Sent(monkeypatch)
    hits = eng.search("deploy pipeline ticket", k=5, record_access=False).hits
    assert len(hits) == 5 and all(h.content for h in hits)
    assert sent.count("SELECT * FROM memories WHERE id = ANY") == 1, sent.statements  # the weighting's
    # (named boosts' own read of a few candidates' metadata stays as it was)
    assert not [
        s for s in sent.statements if s.startswith("SELECT id, kind, tier, pinned") and "AS head" not in s
    ]
    monkeypatch.undo()
    assert answers(eng) == want == fresh_answers(pg_db)
    # outside a read snapshot nothing is held: each read asks
    ids = [h.id for h in hits]
    rows = eng.store.query(lambda c: (c.memory_queries.weighting(ids), c.memory_queries.rows(ids)))
    assert sorted(int(r["id"]) for r in rows[1]) == sorted(ids)


def test_a_remember_checks_duplicates_against_another_agents_fresh_write_in_one_read(three, monkeypatch):
    """Dedup inside the write: the memories logged since the matrix's last sync come with their
    vectors in one statement (was the ids, then their vectors), and the other agent's just
    committed near-duplicate is found."""
    _, eng, other = three
    eng.vectors.sync_every = 600.0  # the write itself reads what changed (no catch-up first)
    eng.search("deploy pipeline", k=5, record_access=False)  # the matrix synced just now
    theirs = other.add_memory("zebrafish husbandry notes for the lab", agent="lab", dedup=False)
    sent = Sent(monkeypatch)
    again = eng.add_memory("zebrafish husbandry notes for the lab", agent="lab", dedup=True)
    assert again == theirs  # reinforced, not stored twice
    assert sent.count("LEFT JOIN memory_vectors") == 1
    assert sent.count(SEPARATE_READS["their vectors"]) == 0
    assert not [s for s in sent.statements if s.startswith("SELECT DISTINCT memory_id FROM vector_changes")]
