"""Issue 12 (Trust), storage: a full disk, a read-only location, a damaged file and malformed
rows are each said plainly (one line; `doctor` findings naming table and id), never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import sqlean

from engine import EngineError, HashEmbedder, open_engine
from engine.storage.sqlite import schema
from tests.engine.storage.test_ids_and_identity import ROOT, _folder, _raw, _sha


# -- plain errors ---------------------------------------------------------------------------------
def test_a_full_disk_says_so_and_writes_nothing(eng):
    eng.add_memory("before the disk filled up")
    c = eng.store.conn
    pages = c.execute("PRAGMA page_count").fetchone()[0]
    c.execute(f"PRAGMA max_page_count = {pages}")
    n = len(eng.memories.list(limit=1000))
    with pytest.raises(EngineError) as e:
        eng.add_memories([{"content": f"fact number {i} " + "x" * 2000} for i in range(200)])
    assert str(e.value).endswith("disk full; nothing was written"), e.value
    assert "\n" not in str(e.value)
    c.execute("PRAGMA max_page_count = 4294967294")
    assert len(eng.memories.list(limit=1000)) == n


def _as_other_user() -> list[str]:
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: no way to be denied a write")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


TRY_WRITE = """
import sys
from engine import EngineError, open_engine
try:
    with open_engine(sys.argv[1], embedder=None) as eng:
        eng.add_memory("should not land")
except EngineError as exc:
    print(exc)
    sys.exit(2)
"""


@pytest.fixture
def shared_dir():
    d = Path(tempfile.mkdtemp(prefix="mc-ro-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _try_write(db: Path, state: Path) -> subprocess.CompletedProcess:
    env = dict(
        os.environ, MEMCONSOLE_STATE=str(state), PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", HOME=str(state)
    )
    return subprocess.run(
        _as_other_user() + [sys.executable, "-c", TRY_WRITE, str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=str(ROOT),
    )


@pytest.mark.parametrize("where", ["read-only file", "read-only folder", "new file in a read-only folder"])
def test_a_read_only_location_says_so_in_one_line(shared_dir, where):
    state = shared_dir / "state"
    state.mkdir(mode=0o777)
    state.chmod(0o777)
    # The other user is an installation of its own, with its own key: since issue 22 a database
    # keyed elsewhere is refused outright where the key is missing (never a key made anew).
    key = state / "secret.key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    if _as_other_user():
        os.chown(key, 65534, 65534)
    folder = shared_dir / "db"
    folder.mkdir()
    db = folder / "memory.db"
    if where != "new file in a read-only folder":
        with open_engine(db, embedder=None) as eng:
            eng.add_memory("already here")
    if db.exists():
        # The other user owns the file (so the engine's roles make them its admin, issue #27): what
        # refuses is the location itself, read-only by mode or by its folder.
        if _as_other_user():
            os.chown(db, 65534, 65534)
        db.chmod(0o444 if where == "read-only file" else 0o644)
    if where == "read-only file":
        folder.chmod(0o777)  # the folder is writable: only the file is not
    else:
        folder.chmod(0o555)
    before = _sha(db) if db.exists() else None
    p = _try_write(db, state)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    line = p.stdout
    assert line.count("\n") == 1 and "Traceback" not in p.stderr, (line, p.stderr)
    assert "read-only" in line and ("nothing was written" in line or "cannot create" in line), line
    assert (_sha(db) if db.exists() else None) == before


# -- doctor -----------------------------------------------------------------------------------------
def _fill(db: Path, n: int = 300) -> None:
    with open_engine(db, embedder=HashEmbedder(), load="now", auto_backfill=False) as eng:
        eng.add_memories([{"content": f"memory number {i} about subject {i % 17} " * 4} for i in range(n)])
        eng.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _corrupt_table_pages(db: Path, table: str) -> None:
    c = sqlean.connect(str(db))
    page_size = c.execute("PRAGMA page_size").fetchone()[0]
    root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    pages = (
        [
            r[0]
            for r in c.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno", (table,)
            )
        ]
        if c.execute("SELECT 1 FROM pragma_module_list WHERE name = 'dbstat'").fetchone()
        else [root]
    )
    c.close()
    with open(db, "r+b") as f:  # no connection is open: writing bytes is safe here
        for pg in pages[len(pages) // 2 : len(pages) // 2 + 2] or [root]:
            f.seek((pg - 1) * page_size + 8)
            f.write(os.urandom(64) + b"\xff" * 200)


def test_doctor_reports_a_damaged_file_as_a_finding(tmp_path):
    db = tmp_path / "memory.db"
    _fill(db)
    _corrupt_table_pages(db, "memories")
    with open_engine(db, embedder=None, auto_backfill=False) as eng:
        report = eng.health.doctor()
        assert not report.ok
        integrity = next(ch for ch in report.checks if ch.name == "sqlite-integrity")
        assert not integrity.ok and integrity.detail != "ok"
        report = eng.health.doctor(repair=True)  # repair on a damaged file: said, not raised
        assert not report.ok
    p = subprocess.run(
        [sys.executable, "-m", "console.cli", "--db", str(db), "doctor"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and "sqlite-integrity" in p.stdout, p.stdout + p.stderr
    assert "FAIL" in p.stdout


def test_doctor_reports_a_file_too_damaged_to_open(tmp_path):
    """The schema itself (page 1 past the header) is garbage: the engine cannot open the file,
    yet `doctor` still exits 1 with SQLite's integrity result, and writes nothing."""
    db = tmp_path / "memory.db"
    _fill(db, n=50)
    with open(db, "r+b") as f:
        f.seek(100 + 8)
        f.write(b"\xa5" * 2000)
    before = _folder(tmp_path)
    with pytest.raises(EngineError, match="damaged"):
        open_engine(db, embedder=None)
    p = subprocess.run(
        [sys.executable, "-m", "console.cli", "--db", str(db), "doctor"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and "FAIL" in p.stdout and "sqlite-integrity" in p.stdout
    assert _folder(tmp_path) == before


def test_doctor_names_each_malformed_row(tmp_path):
    db = tmp_path / "memory.db"
    with open_engine(db, embedder=HashEmbedder(), load="now", auto_backfill=False) as eng:
        ids = [eng.add_memory(f"planted memory {i}") for i in range(6)]
        rule = eng.rules.add("never deploy on fridays").id
        eng.flows.add("rollback", ["stop", "roll back"])
        assert eng.health.doctor().ok
    c = _raw(db)
    c.execute("UPDATE memories SET importance = 9e999 WHERE id = ?", (ids[0],))
    c.execute("UPDATE memories SET strength = 'NaN' WHERE id = ?", (ids[1],))
    c.execute("UPDATE rules SET score = -9e999 WHERE id = ?", (rule,))
    c.execute("UPDATE memories SET metadata = '{not json' WHERE id = ?", (ids[2],))
    c.execute("UPDATE memories SET metadata = '[1, 2]' WHERE id = ?", (ids[3],))
    c.execute("UPDATE flows SET steps = 'NaN' WHERE name = 'rollback'")
    bad = struct.pack(f"{schema.EMBED_DIM}f", *([float("nan")] + [0.1] * (schema.EMBED_DIM - 1)))
    c.execute("UPDATE memories_vec SET embedding = ? WHERE memory_id = ?", (bad, ids[4]))
    c.close()
    with open_engine(db, embedder=None, auto_backfill=False) as eng:
        report = eng.health.doctor()
    found = {(ch.name, ch.ids[0]): ch.detail for ch in report.problems if ch.name.startswith("malformed:")}
    assert ("malformed:memories", ids[0]) in found and "importance" in found[("malformed:memories", ids[0])]
    assert ("malformed:memories", ids[1]) in found and "strength" in found[("malformed:memories", ids[1])]
    assert ("malformed:rules", rule) in found and "score" in found[("malformed:rules", rule)]
    assert "not valid JSON" in found[("malformed:memories", ids[2])]
    assert "not an object" in found[("malformed:memories", ids[3])]
    assert any(k[0] == "malformed:flows" and "steps" in v for k, v in found.items())
    assert "non-finite" in found[("malformed:memories_vec", ids[4])]
    for detail in found.values():
        assert "\n" not in detail and " id " in detail
    json.dumps([ch.__dict__ for ch in report.checks], allow_nan=False)  # findings are plain data


def test_doctor_names_vectors_of_the_wrong_dimension(tmp_path):
    db = tmp_path / "memory.db"
    with open_engine(db, embedder=None) as eng:
        mid = eng.add_memory("a memory whose vector was written by another model")
    c = _raw(db)
    c.execute("DROP TABLE memories_vec")
    c.execute(
        "CREATE VIRTUAL TABLE memories_vec USING vec0(memory_id INTEGER PRIMARY KEY, "
        "embedding float[8] distance_metric=cosine, tier TEXT, kind TEXT, category TEXT, "
        "agent TEXT, user TEXT)"
    )
    c.execute(
        "INSERT INTO memories_vec(memory_id, embedding, tier, kind, category, agent, user) "
        "SELECT id, ?, tier, kind, category, agent, user FROM memories",
        (struct.pack("8f", *[0.5] * 8),),
    )
    c.execute("UPDATE memories SET embedded = 1")
    c.close()
    with open_engine(db, embedder=None, auto_backfill=False) as eng:
        report = eng.health.doctor()
    hit = [ch for ch in report.problems if ch.name == "malformed:memories_vec"]
    assert hit and hit[0].ids == [mid] and "8 dimensions, not 384" in hit[0].detail
