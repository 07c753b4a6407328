"""Archive bursts (issue 17): many memories crossing the threshold in one pass are archived
set-based — the per-row vector triggers dropped inside the pass's transaction, vec0's filter
fields and the change log written in bulk (engine/storage/sqlite/decay.py, vector.py) — and
everything that reads those copies still agrees with the table afterwards: vec0's filtered KNN,
search with tier filters, and another process's in-memory matrix following the change log."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from engine.clock import DAY
from engine.retrieval.filters import Filters
from engine.storage.sqlite import decay as sqlite_decay
from engine.storage.sqlite.vector import SqliteVectorStore

ROOT = Path(__file__).resolve().parents[3]
AGENTS = ("ops", "a-very-long-agent-name", "coder")  # one past vec0's 12-byte inline prefix
FIELDS = "tier, kind, category, agent, user"


@pytest.fixture
def burst_from(monkeypatch):
    """The burst path from 10 rows on, so a small file takes it (the code path is the same)."""
    monkeypatch.setattr(sqlite_decay, "BURST_FROM", 10)


def _seed(eng, n=60):
    ids = []
    for i in range(n):
        ids.append(
            eng.add_memory(
                f"harbour note {i} about cranes and tides {i % 7}",
                kind=("episodic", "semantic", "procedural")[i % 3],
                agent=AGENTS[i % 3],
                category=("ops", "decision")[i % 2],
                pinned=i % 10 == 1,
                tier="core" if i % 10 == 2 else "active",
            )
        )
    return ids


def _table(eng):
    return {
        int(r[0]): tuple(r[1:])
        for r in eng.store.conn.execute(f"SELECT id, {FIELDS} FROM memories WHERE embedded = 1")
    }


def _vec0(eng):
    c = eng.store.conn
    ids = [int(r[0]) for r in c.execute("SELECT id FROM memories WHERE embedded = 1")]
    out = {}
    for i in ids:  # point reads through vec0 itself (not its chunk blobs)
        r = c.execute(f"SELECT {FIELDS} FROM memories_vec WHERE memory_id = ?", (i,)).fetchone()
        out[i] = tuple(r)
    return out


def _triggers(eng):
    return {
        r[0]
        for r in eng.store.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name IN (?, ?)",
            sqlite_decay.VECTOR_TRIGGERS,
        )
    }


READER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from engine import HashEmbedder, open_engine
    from engine.retrieval.filters import Filters
    eng = open_engine(sys.argv[1], embedder=HashEmbedder(), actor="reader")
    eng.vectors.keep_in_memory()
    m = eng.vectors.matrix
    print("ready", flush=True)
    sys.stdin.readline()
    q = np.frombuffer(bytes.fromhex(sys.argv[2]), dtype=np.float32)
    eng.vectors.knn(q, 1, Filters())  # catches the matrix up through the change log
    inv = {v: k for k, v in m.vocab["tier"].items()}
    tiers = {int(m.ids[j]): inv[int(m.codes["tier"][j])] for j in range(m.n) if m.alive[j]}
    knn = {t: [i for i, _ in eng.vectors.knn(q, 100, Filters((t,)))] for t in ("active", "archived", "core")}
    print(json.dumps({"tiers": tiers, "knn": knn, "seq": m.seq}), flush=True)
    eng.close()
    """
)


def test_burst_keeps_vec0_search_and_another_process_matrix_equal_to_the_table(eng, burst_from):
    ids = _seed(eng)
    t0 = eng.clock.now()
    eng.decay.run(now=t0)  # schedules archive_at, archives nothing
    q = eng.vectors.vector_of(ids[5])
    assert q is not None
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(eng.store.path), q.tobytes().hex()],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout is not None and reader.stdin is not None
        assert reader.stdout.readline().strip() == "ready"  # its matrix holds the pre-burst tiers
        res = eng.decay.run(now=t0 + 400 * DAY)
        crossing = [i for n, i in enumerate(ids) if n % 10 not in (1, 2)]  # neither pinned nor core
        assert res.memories_archived == len(crossing) > 10
        table = _table(eng)
        assert {i for i, f in table.items() if f[0] == "archived"} == set(crossing)
        assert _vec0(eng) == table  # vec0's filter fields follow the table, long agent names too
        assert _triggers(eng) == set(sqlite_decay.VECTOR_TRIGGERS)  # back after the burst
        logged = {int(r[0]) for r in eng.store.conn.execute("SELECT memory_id FROM vector_changes")}
        assert set(crossing) <= logged
        # vec0's own filtered KNN (what searches use before the matrix is loaded)
        for tier in ("active", "archived", "core"):
            got = eng.vectors.knn_sql(q, 100, Filters((tier,)))
            assert {i for i, _ in got} == {i for i, f in table.items() if f[0] == tier}
        hits = eng.search("harbour cranes", k=50, tier="archived", record_access=False).hits
        assert hits and all(table[h.id][0] == "archived" for h in hits)
        agent = AGENTS[1]
        got = eng.vectors.knn_sql(q, 100, Filters(("archived",), agent=agent))
        assert {i for i, _ in got} == {i for i, f in table.items() if f[0] == "archived" and f[3] == agent}
        # another process's matrix, loaded before the burst, catches up through the log
        reader.stdin.write("go\n")
        reader.stdin.flush()
        out = json.loads(reader.stdout.readline())
    finally:
        reader.kill() if reader.poll() is None else None
        reader.wait()
    assert {int(k): v for k, v in out["tiers"].items()} == {i: f[0] for i, f in table.items()}
    for tier, got_ids in out["knn"].items():
        assert set(got_ids) == {i for i, f in table.items() if f[0] == tier}


def test_after_a_burst_the_per_row_triggers_work_again(eng, burst_from):
    ids = _seed(eng, 30)
    t0 = eng.clock.now()
    eng.decay.run(now=t0)
    eng.decay.run(now=t0 + 400 * DAY)
    eng.memories.restore(ids[0])  # one row, through the trigger again
    eng.memories.set_tier(ids[2], "active")
    table = _table(eng)
    assert table[ids[0]][0] == "active"
    assert _vec0(eng) == table


def test_a_failed_burst_rolls_back_tiers_vec0_and_the_triggers(eng, burst_from, monkeypatch):
    ids = _seed(eng, 30)
    t0 = eng.clock.now()
    eng.decay.run(now=t0)
    before_table, before_vec0 = _table(eng), _vec0(eng)

    def broken(self, conn, rows, *fields):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(SqliteVectorStore, "set_filters", broken)
    with pytest.raises(RuntimeError):
        eng.decay.run(now=t0 + 400 * DAY)
    monkeypatch.undo()
    assert _table(eng) == before_table
    assert _vec0(eng) == before_vec0
    assert _triggers(eng) == set(sqlite_decay.VECTOR_TRIGGERS)
    res = eng.decay.run(now=t0 + 400 * DAY)  # and the pass still works afterwards
    assert res.memories_archived > 0 and _vec0(eng) == _table(eng)
    assert len(ids) == 30


def test_set_filters_writes_short_and_long_values_like_vec0(eng):
    """Straight into the chunk blobs for short values; through vec0 when a value is, or was,
    longer than the 12 bytes a chunk slot holds inline."""
    ids = _seed(eng, 24)
    c = eng.store.conn
    new = {
        i: (
            ("archived", "core", "active")[n % 3],
            "semantic",
            ("ops", "a-category-past-twelve")[n % 2],
            ("coder", "another-long-agent-name", "ops", "")[n % 4],
            "" if n % 5 else "user-ü",
        )
        for n, i in enumerate(ids)
    }
    c.execute("BEGIN")
    # what the burst path does: the memories rows without the per-row triggers, then vec0 in bulk
    with sqlite_decay.triggers_dropped(c, sqlite_decay.VECTOR_TRIGGERS):
        for i, f in new.items():
            c.execute("UPDATE memories SET tier = ?, kind = ?, category = ?, agent = ?, user = ? WHERE id = ?",
                      (*f, i))  # fmt: skip
        assert _vec0(eng) != {i: tuple(f) for i, f in new.items()}  # nothing else wrote vec0
        set_rows = [(i, *f) for i, f in new.items()] + [(10**9, "archived", "", "", "", "")]  # no vector
        assert SqliteVectorStore().set_filters(c, set_rows) == len(ids)
    c.execute("COMMIT")
    assert _vec0(eng) == {i: tuple(f) for i, f in new.items()}
    q = np.asarray(eng.vectors.vector_of(ids[0]), dtype=np.float32)
    got = eng.vectors.knn_sql(q, 100, Filters(("archived",), agent="another-long-agent-name"))
    want = {i for i, f in new.items() if f[0] == "archived" and f[3] == "another-long-agent-name"}
    assert want and {i for i, _ in got} == want


@pytest.mark.parametrize("share", [0.25, 2.0])  # past the share: by scan; never: by the index
def test_a_burst_by_scan_or_by_the_index_archives_the_same_rows_and_keeps_the_index(
    eng, burst_from, monkeypatch, share
):
    """Past 1/BURST_SHARE of the table the archive_at index is dropped for the UPDATE and
    rebuilt; below, the rows are updated through it. Either way the same rows leave it, the
    index is back with the rows that stay, and vec0 and the change log follow."""
    monkeypatch.setattr(sqlite_decay, "BURST_SHARE", share)
    dropped = []
    real = sqlite_decay.SqliteDecayAccess.archive_index_dropped
    monkeypatch.setattr(
        sqlite_decay.SqliteDecayAccess,
        "archive_index_dropped",
        lambda self, conn: dropped.append(1) or real(self, conn),
    )
    ids = _seed(eng, 40)
    c = eng.store.conn
    t0 = eng.clock.now()
    eng.decay.run(now=t0)
    later = ids[-1]  # reinforced: it crosses long after the others, so it stays in the index
    c.execute("UPDATE memories SET archive_at = ? WHERE id = ?", (t0 + 10**6 * DAY, later))
    seq = int(c.execute("SELECT coalesce(max(seq), 0) FROM vector_changes").fetchone()[0])
    dropped.clear()
    cache = c.execute("PRAGMA cache_size").fetchone()[0]
    res = eng.decay.run(now=t0 + 400 * DAY)
    assert len(dropped) == (share < 1)
    assert c.execute("PRAGMA cache_size").fetchone()[0] == cache  # raised for the burst only
    crossing = [i for n, i in enumerate(ids) if n % 10 not in (1, 2) and i != later]
    assert sorted(res.archived_ids) == sorted(crossing)
    indexed = c.execute("SELECT sql FROM sqlite_master WHERE name = ?", (sqlite_decay.ARCHIVE_INDEX,))
    assert "WHERE tier = 'active' AND pinned = 0" in indexed.fetchone()[0]
    in_index = [
        int(r[0])
        for r in c.execute(
            f"SELECT id FROM memories INDEXED BY {sqlite_decay.ARCHIVE_INDEX}"
            " WHERE tier = 'active' AND pinned = 0 AND archive_at > 0"
        )
    ]
    assert in_index == [later]
    assert _vec0(eng) == _table(eng)
    logged = [int(r[0]) for r in c.execute("SELECT memory_id FROM vector_changes WHERE seq > ?", (seq,))]
    assert logged == sorted(crossing)  # once each, in id order
    assert eng.decay.run(now=t0 + 400 * DAY).memories_archived == 0


def test_a_burst_changing_other_filter_fields_writes_them_all_to_vec0(eng, burst_from):
    """The tier-only shortcut applies only when the tier literal is the one filter field set."""
    assert sqlite_decay.set_tier("tier = 'archived', strength = 0.1, updated_at = :now") == "archived"
    assert sqlite_decay.set_tier("strength = 0.1, tier = 'core'") == "core"
    assert sqlite_decay.set_tier("tier = 'archived', kind = 'semantic'") is None
    assert sqlite_decay.set_tier("tier = :tier") is None
    assert sqlite_decay.set_tier("strength = 0.1") is None
    ids = _seed(eng, 30)
    access, c = eng.store.decay_access, eng.store.conn
    c.execute("BEGIN IMMEDIATE")
    got = access.update_ids(c, "planner", "tier = 'core', agent = 'coder'", "pinned = 0", {})
    c.execute("COMMIT")
    assert sorted(got) == [i for n, i in enumerate(ids) if n % 10 != 1]
    table = _table(eng)
    assert all(table[i][0] == "core" and table[i][3] == "coder" for i in got)
    assert _vec0(eng) == table
    assert _triggers(eng) == set(sqlite_decay.VECTOR_TRIGGERS)


def test_a_long_burst_logs_what_the_prune_trigger_would_leave(eng):
    """Past the log's length only the surviving entries are written, with the numbers and the
    deletions the trigger-driven INSERT would have produced (here a trigger keeping 20 of every 8)."""
    c = eng.store.conn
    c.execute("DROP TRIGGER vector_changes_prune")
    c.execute(
        "CREATE TRIGGER vector_changes_prune AFTER INSERT ON vector_changes WHEN new.seq % 8 = 0"
        " BEGIN DELETE FROM vector_changes WHERE seq <= new.seq - 20; END"
    )

    def state():
        rows = c.execute("SELECT seq, memory_id, text_changed FROM vector_changes ORDER BY seq").fetchall()
        top = c.execute("SELECT seq FROM sqlite_sequence WHERE name = 'vector_changes'").fetchone()
        return [tuple(r) for r in rows], top[0] if top else None

    skipped = 0
    for before in (0, 3, 7, 13, 30):
        for n in (1, 5, 19, 20, 21, 27, 40, 95):
            c.execute("BEGIN")
            c.execute("DELETE FROM vector_changes")
            c.execute("DELETE FROM sqlite_sequence WHERE name = 'vector_changes'")
            c.executemany(
                "INSERT INTO vector_changes(memory_id) VALUES (?)", [(10_000 + i,) for i in range(before)]
            )
            ids = list(range(500, 500 + 2 * n, 2))
            c.execute("SAVEPOINT plain")
            c.executemany("INSERT INTO vector_changes(memory_id) VALUES (?)", [(i,) for i in ids])
            want = state()
            c.execute("ROLLBACK TO plain")
            first = 1 + before
            skipped += sqlite_decay.pruned_upto(c, first, n) >= first
            sqlite_decay.SqliteDecayAccess.log(c, ids)
            assert state() == want, (before, n)
            c.execute("ROLLBACK")
    assert skipped > 5  # the shortcut was taken, not only the plain INSERT
