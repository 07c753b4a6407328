"""Round trips a recall and a remember send to PostgreSQL (issue #24): reads that cannot change
within one call are asked once, and the answers stay those of asking every time."""

from __future__ import annotations

from collections import Counter

from engine import HashEmbedder, open_engine
from engine.storage.postgres.connection import PgConnection
from engine.storage.postgres.feed import VectorChangeLog

FEED_HEAD = "min(seq) FROM vector_changes"
PART_LAST = "FROM audit WHERE part = %s ORDER BY seq DESC"


def counting(monkeypatch) -> Counter[str]:
    seen: Counter[str] = Counter()
    real = PgConnection.execute

    def execute(self, sql, params=()):
        for key in (FEED_HEAD, PART_LAST):
            if isinstance(sql, str) and key in sql:
                seen[key] += 1
        return real(self, sql, params)

    monkeypatch.setattr(PgConnection, "execute", execute)
    return seen


def test_feed_head_is_asked_once_per_read_snapshot_and_anew_in_the_next(pg_db, monkeypatch):
    feed = VectorChangeLog()
    with open_engine(pg_db, embedder=HashEmbedder()) as eng:
        eng.add_memory("deploys need a change ticket")
        seen = counting(monkeypatch)
        with eng.store.reading() as conn:
            first = feed.head(conn)
            assert feed.head(conn) == first
        assert seen[FEED_HEAD] == 1
        eng.add_memory("billing runs on the first of the month")  # moves the feed
        with eng.store.reading() as conn:
            after = feed.head(conn)
        assert after[0] > first[0]  # a new snapshot asks again: never a stale head
        assert seen[FEED_HEAD] == 2
        eng.store.query(lambda c: (feed.head(c), feed.head(c)))  # no snapshot: every read asks
        assert seen[FEED_HEAD] == 4


def test_a_recall_asks_the_feed_once_and_an_append_reads_its_partition_once(pg_db, monkeypatch):
    with open_engine(pg_db, embedder=HashEmbedder()) as eng:
        eng.add_memories(
            [{"content": f"deploy pipeline step {i} for the api"} for i in range(30)], dedup=False
        )
        eng.vectors.keep_in_memory()
        eng.retrieval.keyword.keep_in_memory()
        eng.search("deploy pipeline", k=5, record_access=False)  # both matrices in memory
        before = [(h.id, h.score) for h in eng.search("deploy pipeline", k=5, record_access=False).hits]
        seen = counting(monkeypatch)
        hits = eng.search("deploy pipeline", k=5, door="mcp", for_agent="coder")
        assert [(h.id, h.score) for h in hits.hits] == before
        assert seen[FEED_HEAD] == 1  # vectors and keywords sync in one snapshot: was 3
        assert seen[PART_LAST] == 1  # the access's audit row: was 2 on a partition other than 0
        seen.clear()
        eng.add_memory("a fresh note about the api", dedup=True)
        assert seen[PART_LAST] == 1
