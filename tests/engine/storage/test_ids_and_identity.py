"""Issue 12 (Trust), storage: ids are never reused; a database is recognised as ours by its
content and anything else is refused byte-identical; nothing opens the file by path behind a live
connection. (Plain errors and doctor findings: test_storage_errors.py.)"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import sqlean
import sqlite_vec

from engine import EngineError, HashEmbedder, open_engine
from engine.storage.sqlite import schema
from engine.storage.sqlite.identity import APP_ID
from engine.storage.sqlite.store import connect

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"

# Every table whose integer id must never be handed out twice.
NEVER_REUSED = (
    "memories",
    "audit",
    "proposals",
    "rules",
    "flows",
    "forget_requests",
    "messages",
    "rule_history",
    "flow_runs",
    "tombstones",
    "curator_runs",
)


def _raw(path: Path) -> sqlean.Connection:
    c = sqlean.connect(str(path), isolation_level=None)
    c.enable_load_extension(True)
    sqlite_vec.load(c)
    return c


def _insert(conn, table: str) -> int:
    """A row with only the required columns filled (raw SQL: no validation in the way)."""
    cols, vals = [], []
    for _, name, decl, notnull, default, pk in conn.execute(f"PRAGMA table_info({table})"):
        if pk or not notnull or default is not None:
            continue
        cols.append(name)
        vals.append("pass" if name == "outcome" else (uuid.uuid4().hex if decl.startswith("TEXT") else 1))
    if "content" not in cols and table == "messages":
        cols.append("content")
        vals.append("x")
    sql = (
        f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
        if cols
        else f"INSERT INTO {table} DEFAULT VALUES"
    )
    return conn.execute(sql, vals).lastrowid


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _folder(folder: Path) -> dict[str, str]:
    return {p.name: _sha(p) for p in sorted(folder.iterdir())}


# -- ids ------------------------------------------------------------------------------------------
def test_every_table_is_declared_autoincrement():
    for t in schema.TABLES:
        if t.name in NEVER_REUSED:
            assert dict(t.columns)["id"].endswith("AUTOINCREMENT"), t.name


@pytest.mark.parametrize("table", NEVER_REUSED)
def test_deleting_the_highest_row_never_frees_its_id(eng, table):
    c = eng.store.conn
    c.execute("PRAGMA foreign_keys = OFF")  # parents are beside the point here
    first = _insert(c, table)
    top = _insert(c, table)
    c.execute(f"DELETE FROM {table} WHERE id = ?", (top,))
    again = _insert(c, table)
    assert again > top > first, (table, first, top, again)


def test_a_forgotten_memory_id_is_never_handed_out_again(eng):
    a = eng.add_memory("the first fact about deploys")
    b = eng.add_memory("the second fact about backups")
    eng.store.write(lambda c: c.execute("DELETE FROM memories WHERE id = ?", (b,)))
    c = eng.add_memory("a third fact about staging")
    assert c > b > a
    top = eng.store.read_one("SELECT max(id) FROM audit")[0]
    eng.store.write(lambda conn: conn.execute("DELETE FROM audit WHERE id = ?", (top,)))
    eng.add_memory("a fourth fact about rollbacks")
    assert eng.store.read_one("SELECT max(id) FROM audit")[0] > top


def _unpack(gz: Path, out: Path) -> Path:
    with gzip.open(gz, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def test_gen1_upgrade_keeps_every_row_and_then_never_reuses(tmp_path):
    db = _unpack(FIXTURES / "schema_gen1.db.gz", tmp_path / "gen1.db")
    c = _raw(db)
    # A memory deleted while the file was still generation 1: its id is known only to the audit.
    gone = c.execute("SELECT max(id) FROM memories").fetchone()[0]
    c.execute("DELETE FROM memories WHERE id = ?", (gone,))
    before = {t: c.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() for t in NEVER_REUSED}
    vec = c.execute("SELECT memory_id, embedding FROM memories_vec ORDER BY 1").fetchall()
    assert c.execute("PRAGMA user_version").fetchone()[0] == 1
    c.close()
    with open_engine(db, embedder=HashEmbedder(), auto_backfill=False) as eng:
        assert set(eng.reconciled.rebuilt) == set(NEVER_REUSED)
        conn = eng.store.conn
        after = {t: conn.execute(f"SELECT * FROM {t} ORDER BY id").fetchall() for t in NEVER_REUSED}
        for t in NEVER_REUSED:
            width = len(before[t][0]) if before[t] else 0
            assert [tuple(r)[:width] for r in after[t]] == [tuple(r) for r in before[t]], t
        assert [
            tuple(r) for r in conn.execute("SELECT memory_id, embedding FROM memories_vec ORDER BY 1")
        ] == [tuple(r) for r in vec]
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APP_ID
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        assert meta["app"] == "memconsole" and meta["generation"] == str(schema.GENERATION)
        assert uuid.UUID(hex=meta["database_id"]).version == 4
        report = eng.health.doctor()
        assert report.ok, [(ch.name, ch.detail) for ch in report.problems]
        assert eng.search("rollback health", mode="keyword", record_access=False).hits
        new = eng.add_memory("written after the upgrade")
        assert new > gone
        top = conn.execute("SELECT max(id) FROM memories").fetchone()[0]
        eng.store.write(lambda w: w.execute("DELETE FROM memories WHERE id = ?", (top,)))
        assert eng.add_memory("and another one") > top
    with open_engine(db, embedder=None) as eng:  # a second open changes nothing
        r = eng.reconciled
        assert not (r.created or r.added_columns or r.recreated or r.rebuilt)
        again = dict(eng.store.conn.execute("SELECT key, value FROM meta").fetchall())
        assert {k: again[k] for k in ("app", "generation", "database_id")} == {
            k: meta[k] for k in ("app", "generation", "database_id")
        }


UPGRADE_AND_ADD = """
import sys
from engine import open_engine
with open_engine(sys.argv[1], embedder=None) as eng:
    print(eng.add_memory("added by " + sys.argv[2], dedup=False))
"""


def test_processes_upgrading_one_gen1_file_at_once_lose_nothing(tmp_path):
    db = _unpack(FIXTURES / "schema_gen1.db.gz", tmp_path / "gen1.db")
    c = _raw(db)
    n = c.execute("SELECT count(*) FROM memories").fetchone()[0]
    c.close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", UPGRADE_AND_ADD, str(db), f"p{i}"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    ids = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        ids.append(int(out))
    assert len(set(ids)) == 3
    with open_engine(db, embedder=None) as eng:
        assert eng.store.read_one("SELECT count(*) FROM memories")[0] == n + 3
        report = eng.health.doctor()
        assert report.ok, [(ch.name, ch.detail) for ch in report.problems]


# -- refusal by content ---------------------------------------------------------------------------
def test_a_new_database_carries_the_marker_from_its_first_page(tmp_path):
    db = tmp_path / "m.db"
    with open_engine(db, embedder=None) as eng:
        # Still open: the schema is in the WAL, but page 1 of the main file is already marked.
        probe = sqlean.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
        assert probe.execute("PRAGMA application_id").fetchone()[0] == APP_ID
        probe.close()
        first = eng.store.read_one("SELECT value FROM meta WHERE key = 'database_id'")[0]
    with open_engine(db, embedder=None) as eng:
        assert eng.store.read_one("SELECT value FROM meta WHERE key = 'database_id'")[0] == first


FOREIGN = {
    "memories-table": "CREATE TABLE memories (id INTEGER PRIMARY KEY, content TEXT);"
    "INSERT INTO memories(content) VALUES ('not ours');",
    "hermes-state": "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL);"
    "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, content TEXT);"
    "INSERT INTO sessions VALUES ('h1', 'cli');",
    "our-tables-no-marker": "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE memories (id INTEGER PRIMARY KEY, content TEXT NOT NULL);"
    "CREATE TABLE audit (id INTEGER PRIMARY KEY, at REAL);",
    "other-app-id": "PRAGMA application_id = 1234; CREATE TABLE t (x);",
}


@pytest.mark.parametrize("user_version", [0, 1, 2, 7, -3])
@pytest.mark.parametrize("kind", sorted(FOREIGN))
@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_a_foreign_file_is_refused_byte_identical(tmp_path, kind, user_version, journal):
    folder = tmp_path / "other"
    folder.mkdir()
    db = folder / "memory.db"  # even under our usual name
    c = sqlean.connect(str(db), isolation_level=None)
    c.execute(f"PRAGMA journal_mode={journal}")
    c.executescript(FOREIGN[kind] + f"PRAGMA user_version = {user_version};")
    c.close()
    before = _folder(folder)
    with pytest.raises(EngineError, match="not a memconsole database") as e:
        open_engine(db, embedder=None)
    assert "\n" not in str(e.value) and "nothing was written" in str(e.value)
    assert _folder(folder) == before  # no -wal, no -shm, not a byte changed


def test_an_empty_schema_with_a_user_version_is_refused(tmp_path):
    db = tmp_path / "blank.db"
    c = sqlean.connect(str(db))
    c.execute("PRAGMA user_version = 5")
    c.close()
    before = _folder(tmp_path)
    with pytest.raises(EngineError, match="not a memconsole database"):
        open_engine(db, embedder=None)
    assert _folder(tmp_path) == before


NAMES = [
    "with#hash.db",
    "with?question.db",
    "with%25percent.db",
    "with%percent.db",
    "with space.db",
    "mode=ro?x=1#y.db",
    os.fsdecode(b"not-utf8-\xff.db"),
    "ünïcode.db",
]


@pytest.mark.parametrize("name", NAMES)
def test_odd_paths_open_ours_and_refuse_foreign(tmp_path, name):
    folder = tmp_path / "a #?% dir"
    folder.mkdir()
    db = folder / name
    with open_engine(db, embedder=None) as eng:
        mid = eng.add_memory("stored at an odd path")
    assert sorted(p.name for p in folder.iterdir()) == [name]  # exactly there, nowhere else
    with open_engine(db, embedder=None) as eng:
        assert eng.memories.get(mid).content == "stored at an odd path"
    foreign = folder / ("x" + name)
    c = sqlean.connect(str(foreign))
    c.executescript("CREATE TABLE memories (id INTEGER PRIMARY KEY, content TEXT);")
    c.close()
    before = _folder(folder)
    with pytest.raises(EngineError, match="not a memconsole database"):
        open_engine(foreign, embedder=None)
    assert _folder(folder) == before


def test_the_cli_takes_an_odd_path_as_a_path(tmp_path):
    db = tmp_path / "a#b?c%41d e.db"
    run = [sys.executable, "-m", "console.cli", "--db", str(db)]
    p = subprocess.run(
        run + ["add", "kept at an odd path"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == [db.name]
    foreign = tmp_path / "x#y?z%.db"
    c = sqlean.connect(str(foreign))
    c.executescript("CREATE TABLE memories (id INTEGER PRIMARY KEY, content TEXT);")
    c.close()
    before = _folder(tmp_path)
    p = subprocess.run(
        [sys.executable, "-m", "console.cli", "--db", str(foreign), "sessions"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "not a memconsole database" in p.stderr
    assert _folder(tmp_path) == before


def test_a_newer_memconsole_file_is_refused_before_any_write(tmp_path):
    db = tmp_path / "future.db"
    with open_engine(db, embedder=None) as eng:
        eng.add_memory("from the future")
    c = sqlean.connect(str(db), isolation_level=None)
    c.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (str(schema.GENERATION + 1),))
    c.execute(f"PRAGMA user_version = {schema.GENERATION + 1}")
    c.execute("PRAGMA journal_mode=DELETE")  # a newer version may have chosen otherwise
    c.close()
    before = _folder(tmp_path)
    for _ in range(2):
        with pytest.raises(EngineError, match="newer memconsole") as e:
            open_engine(db, embedder=None)
        assert "\n" not in str(e.value)
    assert _folder(tmp_path) == before  # no WAL switch, no header change, no -wal


def test_a_legacy_gen1_file_in_use_is_recognised_through_its_wal(tmp_path):
    """A generation-1 file whose schema is still only in the WAL (another process holds it):
    read in a child process with a read-only -shm, so nothing of the owner's changes."""
    db = _unpack(FIXTURES / "schema_gen1.db.gz", tmp_path / "src.db")
    live_db = tmp_path / "live.db"
    live = sqlean.connect(str(live_db), isolation_level=None)
    live.execute("PRAGMA journal_mode=wal")
    live.execute("PRAGMA wal_autocheckpoint=0")
    src = _raw(db)
    live.enable_load_extension(True)
    sqlite_vec.load(live)
    live.execute("BEGIN")
    for (sql,) in src.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND sql NOT "
        "LIKE 'CREATE VIRTUAL%' AND name NOT LIKE 'memories_vec%' AND name "
        "NOT LIKE '%fts%' AND name NOT LIKE '%tri%' AND name NOT LIKE "
        "'sqlite_%'"
    ):
        live.execute(sql)
    live.execute(
        "CREATE VIRTUAL TABLE memories_vec USING vec0(memory_id INTEGER PRIMARY KEY, embedding float[384])"
    )
    live.execute("CREATE VIRTUAL TABLE memories_fts USING fts5(content)")
    live.execute("PRAGMA user_version = 1")
    live.execute("COMMIT")
    src.close()
    try:
        probe = sqlean.connect(f"file:{live_db}?mode=ro&immutable=1", uri=True)
        assert probe.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
        probe.close()
        from engine.storage.sqlite import identity

        assert identity.check(live_db, schema.GENERATION) == identity.OURS
    finally:
        live.close()


# -- nothing opens the file by path behind a live connection --------------------------------------
CHILD_WRITE = """
import sqlean, sys
c = sqlean.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA busy_timeout=5000")
c.execute("INSERT INTO meta(key, value) VALUES ('child', 'was here')")
c.close()
"""


def test_a_second_open_in_the_process_keeps_the_first_ones_locks(tmp_path):
    """A fresh database (its schema only in the WAL) held open by a long-lived engine; opening it
    again in the same process (the peek, a second engine, the vector matrix's own connection)
    must not drop that engine's locks. If it did, a writer in another process would find itself
    'last', checkpoint and delete the WAL under the engine."""
    db = tmp_path / "memory.db"
    first = open_engine(db, embedder=HashEmbedder(), auto_backfill=False)
    try:
        first.add_memory("written by the long-lived engine")
        with open_engine(db, embedder=None) as second:
            second.add_memory("written by a second engine in the same process")
        connect(db).close()
        first.vectors.keep_in_memory()
        wal = Path(f"{db}-wal")
        assert wal.exists()
        p = subprocess.run(
            [sys.executable, "-c", CHILD_WRITE, str(db)], capture_output=True, text=True, timeout=60
        )
        assert p.returncode == 0, p.stderr
        assert wal.exists(), "the other process thought it was the last: our locks were dropped"
        first.add_memory("written again by the long-lived engine")
        assert first.store.read_one("SELECT value FROM meta WHERE key = 'child'")[0] == "was here"
    finally:
        first.close()
    with open_engine(db, embedder=None) as eng:
        assert eng.store.read_one("PRAGMA integrity_check")[0] == "ok"
        assert len(eng.memories.list(limit=10)) == 3
        assert eng.health.doctor().ok
