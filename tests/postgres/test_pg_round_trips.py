"""Round trips a recall and a remember send to PostgreSQL (issue #24): reads that cannot change
within one call are asked once, and the answers stay those of asking every time."""

from __future__ import annotations

from collections import Counter

import pytest

from engine import HashEmbedder, open_engine
from engine.storage.postgres.connection import PgConnection
from engine.storage.postgres.feed import VectorChangeLog

FEED_HEAD = "min(seq) FROM vector_changes"
PART_LAST = "FROM audit WHERE part = %s ORDER BY seq DESC"
PART_PICK = "FOR UPDATE SKIP LOCKED"  # with the partition's newest row, in one statement


def counting(monkeypatch) -> Counter[str]:
    seen: Counter[str] = Counter()
    real = PgConnection.execute

    def execute(self, sql, params=()):
        for key in (FEED_HEAD, PART_LAST, PART_PICK):
            if isinstance(sql, str) and key in sql and not sql.startswith("INSERT"):
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


def test_a_recall_asks_the_feed_once_and_an_append_locks_and_reads_its_partition_at_once(pg_db, monkeypatch):
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
        # the access's audit row: its partition locked and its newest row read in one statement
        # (was 2, and 3 on a partition other than 0)
        assert (seen[PART_PICK], seen[PART_LAST]) == (1, 0)
        seen.clear()
        eng.add_memory("a fresh note about the api", dedup=True)
        assert (seen[PART_PICK], seen[PART_LAST]) == (1, 0)


# -- round trips per call (bench/pg_trips.py counts the same way) ------------------------------------


class Sent:
    """What this thread sends to the server: statements by text, and the round trips they took
    (statements in one psycopg pipeline share one)."""

    def __init__(self, monkeypatch) -> None:
        import threading

        import psycopg

        self.statements: list[str] = []
        self.trips = 0
        me = threading.get_ident()
        real_exec, real_pipeline = psycopg.Cursor.execute, psycopg.Connection.pipeline
        sent = self

        def execute(cur, query, *a, **k):
            if threading.get_ident() == me and isinstance(query, str):
                sent.statements.append(" ".join(query.split()))
                if getattr(cur.connection, "_pipeline", None) is None:
                    sent.trips += 1
            return real_exec(cur, query, *a, **k)

        from contextlib import contextmanager

        @contextmanager
        def pipeline(conn):
            with real_pipeline(conn) as p:
                yield p
            if threading.get_ident() == me:
                sent.trips += 1

        monkeypatch.setattr(psycopg.Cursor, "execute", execute)
        monkeypatch.setattr(psycopg.Connection, "pipeline", pipeline)

    def count(self, text: str) -> int:
        return sum(text in s for s in self.statements)


ANCHOR_READS = ("FROM meta WHERE key", "inet_server_addr()", "FROM audit WHERE id", "count(*) FROM audit")


def test_the_anchor_reads_once_per_write_and_still_catches_a_changed_identity_and_a_cut_tail(
    pg_db, monkeypatch
):
    with open_engine(pg_db, embedder=HashEmbedder()) as eng:
        eng.add_memory("deploys need a change ticket")
        eng.add_memory("billing runs on the first of the month")  # this process anchored last
        sent = Sent(monkeypatch)
        eng.add_memory("the api gateway times out after 30 s")
        anchor = [
            s[:60]
            for s in sent.statements
            if (any(k in s for k in ANCHOR_READS) or "ORDER BY id DESC" in s) and "memory_vectors" not in s
        ]  # (a KNN and a vector insert read the model tag from meta in their own statement)
        assert len(anchor) == 1, anchor  # was 6: head, id, place, head again, the anchored row, the count
        assert eng.store.hook_errors == []
        assert eng.audit.verify().ok

        # the tail cut back: the next write's anchor finds its row gone, and says so
        top = eng.store.conn.execute("SELECT max(id) FROM audit").fetchone()[0]
        eng.store.conn.execute("DELETE FROM audit WHERE id = %s", [top])
        eng.add_memory("a note after the cut")
        assert any("not the row anchored there" in e for e in eng.store.hook_errors), eng.store.hook_errors
        assert not eng.audit.verify().ok

        # the database's id changed under the anchor: the place still names the old one
        eng.store.hook_errors.clear()
        eng.store.conn.execute("UPDATE meta SET value = 'someoneelse' WHERE key = 'database_id'")
        eng.add_memory("a note under another id")
        assert any("identity changed" in e for e in eng.store.hook_errors), eng.store.hook_errors


def test_a_recall_write_sends_no_keyword_upkeep_and_shares_round_trips(pg_db, monkeypatch):
    with open_engine(pg_db, embedder=HashEmbedder()) as eng:
        ids = eng.add_memories(
            [{"content": f"deploy pipeline step {i} for the api"} for i in range(12)], dedup=False
        )
        eng.search("deploy pipeline", k=5, door="mcp", for_agent="coder")  # warm
        counts = dict(eng.store.conn.execute("SELECT id, access_count FROM memories").fetchall())
        sent = Sent(monkeypatch)
        hits = eng.search("deploy pipeline", k=5, door="mcp", for_agent="coder").hits
        assert len(hits) == 5
        assert sent.count("DELETE FROM fts_pending") == 0  # a recall queued no text
        assert sent.count("UPDATE memories m SET anchor_strength") == 1
        # the snapshot's and the write's BEGIN ride with their first statements, the access
        # update with the audit head's lock: 3 round trips fewer than statements
        assert sent.trips <= len(sent.statements) - 3, (sent.trips, sent.statements)
        after = dict(eng.store.conn.execute("SELECT id, access_count FROM memories").fetchall())
        assert {i for i in after if after[i] != counts[i]} == {h.id for h in hits}
        assert all(after[h.id] == counts[h.id] + 1 for h in hits)
        assert eng.audit.verify().ok and eng.store.hook_errors == []

        # a remember still tokenizes its text inside its write: found by keyword at once
        sent.statements.clear()
        new = eng.add_memory("zebrafish husbandry notes", dedup=True)
        assert sent.count("DELETE FROM fts_pending") == 1
        assert [h.id for h in eng.search("zebrafish", k=3, mode="keyword", record_access=False).hits] == [new]
        assert new not in ids


def test_what_may_queue_text_is_read_conservatively():
    from engine.storage.postgres.text_queue import may_queue_text

    queues = [
        'INSERT INTO memories("content") VALUES (%s)',
        'INSERT INTO "rules" (text) VALUES (%s)',
        'UPDATE memories SET "content" = %s WHERE id = %s',
        "UPDATE flows SET steps = %s",
        "WITH x AS (SELECT 1) INSERT INTO memories SELECT 1",
        "SELECT 1; INSERT INTO memories DEFAULT VALUES",
        "COPY memories (content) FROM STDIN",
        "ROLLBACK TO SAVEPOINT s",
        "INSERT INTO fts_pending(src, doc_id) SELECT %s, id FROM memories",  # doctor's rebuild
    ]
    quiet = [
        "SELECT * FROM memories WHERE id = ANY(%s::bigint[]) ORDER BY id FOR NO KEY UPDATE",
        "UPDATE memories m SET anchor_strength = r.s FROM unnest(%s::bigint[], %s::float8[]) AS r(id, s)",
        "INSERT INTO audit(at, actor) VALUES (%s, %s)",
        "INSERT INTO recall_log(at) VALUES (%s) RETURNING id",
        "DELETE FROM memories WHERE id = 1",
        "BEGIN",
        "SET LOCAL lock_timeout = 2000",
    ]
    assert [q for q in queues if not may_queue_text(q)] == []
    assert [q for q in quiet if may_queue_text(q)] == []


@pytest.mark.parametrize("copy_above", [0, 5000], ids=["copy", "arrays"])
def test_the_keyword_upkeep_replaces_terms_in_three_round_trips(pg_db, monkeypatch, copy_above):
    from engine.storage.lexemes import counted
    from engine.storage.postgres import keyword_upkeep

    monkeypatch.setattr(keyword_upkeep, "COPY_ABOVE", copy_above)
    with open_engine(pg_db, embedder=HashEmbedder()) as eng:
        mid = eng.add_memory("the old words of a note note", dedup=False)
        sent = Sent(monkeypatch)
        eng.store.write(
            lambda c: c.execute(
                "UPDATE memories SET content = %s WHERE id = %s", ["fresh fresh text here", mid]
            )
        )
        upkeep = [s for s in sent.statements if "fts_" in s]
        assert len(upkeep) == (1 if copy_above == 0 else 3), upkeep  # COPYs are not cursor.execute
        terms = dict(
            eng.store.conn.execute(
                "SELECT term, tf FROM fts_terms WHERE src = 'memories' AND doc_id = %s", [mid]
            ).fetchall()
        )
        tf, length = counted("fresh fresh text here")
        assert terms == dict(tf)
        assert (
            eng.store.conn.execute(
                "SELECT len FROM fts_docs WHERE src = 'memories' AND doc_id = %s", [mid]
            ).fetchone()[0]
            == length
        )
        hits = eng.search("fresh", k=3, mode="keyword", record_access=False).hits
        assert [h.id for h in hits] == [mid]
        assert eng.search("old words", k=3, mode="keyword", record_access=False).hits == []
