"""Schema evolution: every fixture generation opens with today's engine and upgrades in place
without losing a row, a value or a vector; a file with missing columns gets them added, data
intact; a file from a newer memconsole is refused, not "downgraded"."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
import sqlean

from engine import EngineError, HashEmbedder, open_engine
from engine.storage.sqlite import schema
from engine.storage.sqlite.identity import APP_ID

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
GENERATIONS = sorted(FIXTURES.glob("schema_gen*.db.gz"))


def _unpack(gz: Path, tmp_path: Path) -> Path:
    out = tmp_path / gz.name.removesuffix(".gz")
    with gzip.open(gz, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def _dump(path: Path) -> dict[str, tuple[list[str], list[tuple]]]:
    """Every plain table's columns and rows, and every vector, read without the engine."""
    import sqlite_vec

    c = sqlean.connect(str(path))
    c.enable_load_extension(True)
    sqlite_vec.load(c)
    try:
        names = [
            t.name
            for t in schema.TABLES
            if c.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (t.name,)
            ).fetchone()
        ]
        out = {}
        for t in names:
            cols = [r[1] for r in c.execute(f"PRAGMA table_info({t})")]
            out[t] = (cols, c.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall())
        out["memories_vec"] = (
            ["memory_id", "embedding"],
            c.execute("SELECT memory_id, embedding FROM memories_vec ORDER BY memory_id").fetchall(),
        )
        return out
    finally:
        c.close()


def test_there_is_a_fixture_for_the_current_generation():
    assert FIXTURES / f"schema_gen{schema.GENERATION}.db.gz" in GENERATIONS, (
        "schema.GENERATION changed: run tests/fixtures/make_fixtures.py and commit the new fixture"
    )


@pytest.mark.parametrize("gz", GENERATIONS, ids=lambda p: p.name)
def test_fixture_upgrades_in_place_without_loss(gz, tmp_path):
    db = _unpack(gz, tmp_path)
    before = _dump(db)
    assert before["memories"][1], "a fixture with no memories proves nothing"
    with open_engine(db, embedder=HashEmbedder(), auto_backfill=False) as eng:
        assert eng.store.read_one("PRAGMA user_version")[0] == schema.GENERATION
        report = eng.health.doctor()
        assert report.ok, [(c.name, c.detail) for c in report.problems]
        hits = eng.search("rollback health checks", mode="keyword", record_access=False).hits
        assert hits and "Rollback" in hits[0].content
        assert eng.sessions.search_messages("日本語")
    after = _dump(db)
    for table, (cols, rows) in before.items():
        new_cols, new_rows = after[table]
        assert set(cols) <= set(new_cols), f"{table} lost columns"
        idx = [new_cols.index(c) for c in cols]
        kept = [tuple(r[i] for i in idx) for r in new_rows]
        if table == "audit":  # the doctor's FTS check writes nothing; only rows may be added
            kept = kept[: len(rows)]
        if table == "meta":  # the identity stamp (app, generation, database_id) is added, and the
            # model tag (vector_model, vector_dim: issue #26)
            added = ("app", "generation", "database_id", "vector_model", "vector_dim")
            kept = [r for r in kept if r[0] not in added]
            rows = [r for r in rows if r[0] not in added]
        assert kept == [tuple(r) for r in rows], f"{table} rows changed"
    with open_engine(db, embedder=HashEmbedder(), auto_backfill=False) as eng:
        assert not (eng.reconciled.created or eng.reconciled.added_columns or eng.reconciled.recreated)


# A memconsole file from before generation 1 (it carries the marker: an unmarked file is refused).
OLD_SHAPE = (
    f"PRAGMA application_id = {APP_ID};"
    + """
CREATE TABLE sessions (id TEXT PRIMARY KEY, agent TEXT, started_at REAL);
CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL
  DEFAULT 'user', content TEXT NOT NULL DEFAULT '', at REAL);
CREATE TABLE memories (id INTEGER PRIMARY KEY, content TEXT NOT NULL, kind TEXT NOT NULL DEFAULT
  'semantic', tier TEXT NOT NULL DEFAULT 'active', agent TEXT NOT NULL DEFAULT '', created_at REAL
  NOT NULL DEFAULT 0, metadata TEXT NOT NULL DEFAULT '{}');
CREATE TABLE flows (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE flow_runs (id INTEGER PRIMARY KEY, flow_id INTEGER NOT NULL, outcome TEXT NOT NULL);
INSERT INTO sessions VALUES ('old-1', 'legacy-bot', 1700000000);
INSERT INTO messages(session_id, role, content, at) VALUES ('old-1', 'user', 'where are the backups kept?', 1700000001);
INSERT INTO memories(content, kind, tier, agent, created_at, metadata) VALUES
  ('Backups are kept in the cold bucket for ninety days', 'semantic', 'active', 'legacy-bot', 1700000002, '{"src": "wiki"}'),
  ('Staging was retired', 'episodic', 'archived', '', 1700000003, '{}');
INSERT INTO flows(name) VALUES ('restore');
INSERT INTO flow_runs(flow_id, outcome) VALUES (1, 'pass');
"""
)


def test_missing_columns_are_added_with_data_intact(tmp_path):
    """Issue 2's acceptance too: memories without absorbed_into / embedded / updated_at (and
    other tables short of columns, one of them NOT NULL without a default) open fine."""
    db = tmp_path / "old.db"
    c = sqlean.connect(str(db))
    c.executescript(OLD_SHAPE)
    c.close()
    with open_engine(db, embedder=None) as eng:
        added = set(eng.reconciled.added_columns)
        assert {
            "memories.absorbed_into",
            "memories.embedded",
            "memories.updated_at",
            "sessions.parent_session_id",
            "messages.metadata",
            "flow_runs.at",
        } <= added
        m1, m2 = eng.memories.list(limit=10)[::-1]
        assert (m1.content, m1.agent, m1.created_at, m1.metadata) == (
            "Backups are kept in the cold bucket for ninety days",
            "legacy-bot",
            1700000002,
            {"src": "wiki"},
        )
        assert (m2.tier, m2.kind, m2.absorbed_into, m2.embedded) == ("archived", "episodic", None, False)
        assert eng.memories.pending_vectors() == 2  # the vectors come with the next model load
        assert [h.id for h in eng.search("backups", mode="keyword").hits] == [m1.id]
        assert eng.sessions.search_messages("backups")[0].message.session_id == "old-1"
        assert eng.sessions.get("old-1").session.agent == "legacy-bot"
        report = eng.health.doctor()
        assert report.ok and report.pending_vectors == [m1.id, m2.id], report.problems
    with open_engine(db, embedder=HashEmbedder(), load="now", auto_backfill=False) as eng:
        assert eng.memories.backfill_vectors() == 2 and eng.memories.pending_vectors() == 0
        assert eng.health.doctor().ok


def test_a_newer_generation_is_refused_untouched(tmp_path):
    db = tmp_path / "future.db"
    with open_engine(db, embedder=None):
        pass
    c = sqlean.connect(str(db))
    c.execute(f"PRAGMA user_version = {schema.GENERATION + 1}")
    c.execute("DROP INDEX memories_tier")  # what a future version might have changed
    c.close()
    data = db.read_bytes()
    with pytest.raises(EngineError, match="newer"):
        open_engine(db, embedder=None)
    c = sqlean.connect(str(db))
    assert c.execute("PRAGMA user_version").fetchone()[0] == schema.GENERATION + 1
    assert not c.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories_tier'").fetchone()
    c.close()
    assert db.read_bytes() == data
