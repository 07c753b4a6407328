"""Security: private files (0600 in 0700 folders), no network at run time, SQL that treats every
user value as data, and foreign databases that are never written."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sqlean

from engine import EngineError, HashEmbedder, open_engine
from tests.direct_sql import direct

pytestmark = pytest.mark.backends

ROOT = Path(__file__).resolve().parents[2]


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


# -- private files ----------------------------------------------------------------------------------
def test_new_database_and_its_wal_and_shm_are_private(tmp_path):
    folder = tmp_path / "fresh" / "place"
    db = folder / "memory.db"
    old = os.umask(0o022)  # a typical permissive umask must not leak into our files
    try:
        with open_engine(db, embedder=HashEmbedder()) as eng:
            eng.add_memory("a private thought")
            wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
            assert wal.exists() and shm.exists()
            assert (_mode(db), _mode(wal), _mode(shm)) == (0o600, 0o600, 0o600)
            assert _mode(folder) == 0o700
    finally:
        os.umask(old)


def test_export_and_curator_reports_are_private(eng, tmp_path):
    old = os.umask(0o022)
    try:
        eng.add_memory("the deploy runs on fridays")
        out = tmp_path / "export.jsonl"
        eng.importers.export_jsonl(out)
        assert _mode(out) == 0o600
        run = eng.curator.run()
        folder = Path(run.report_dir)
        files = [p for p in folder.iterdir() if p.is_file()]
        assert files and all(_mode(p) == 0o600 for p in files), [(p.name, oct(_mode(p))) for p in files]
        assert _mode(folder) == 0o700 and _mode(folder.parent) == 0o700
    finally:
        os.umask(old)


# -- no network --------------------------------------------------------------------------------------
NO_NET = textwrap.dedent("""
    import os, socket, sys
    os.environ.pop("HF_HUB_OFFLINE", None); os.environ.pop("TRANSFORMERS_OFFLINE", None)
    tried = []
    def refuse(self, address, *a, **k):
        tried.append(repr(address))
        raise OSError("network disabled by the test")
    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    real_gai = socket.getaddrinfo
    def gai(host, *a, **k):
        tried.append(f"dns {host}")
        raise socket.gaierror("network disabled by the test")
    socket.getaddrinfo = gai
    from engine.embed import MiniLMEmbedder
    v = MiniLMEmbedder().embed(["is anyone listening?"])
    assert v.shape == (1, 384)
    print("TRIED", tried)
    sys.exit(1 if tried else 0)
""")


@pytest.mark.model
def test_the_embedder_never_reaches_for_the_network():
    """Loads the real model in a fresh process with every socket refused (and the offline
    variables removed from the environment first, so the engine has to set them itself)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    p = subprocess.run(
        [sys.executable, "-c", NO_NET], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-3000:])
    assert "TRIED []" in p.stdout


def test_engine_code_imports_no_network_library():
    import ast

    banned = {"socket", "urllib.request", "http.client", "requests", "httpx", "aiohttp", "urllib3"}
    for f in (ROOT / "engine").rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not banned & set(names), f"{f.relative_to(ROOT)} imports {names}"


# -- SQL: user values are data ----------------------------------------------------------------------
INJECT = ["x' OR '1'='1", 'x" OR 1=1 --', "'; DELETE FROM memories; --", "1) OR (1=1"]


@pytest.mark.parametrize("evil", INJECT)
def test_filter_values_are_parameters_not_sql(eng, evil):
    sid = eng.sessions.add("s1", agent="alice")
    eng.sessions.add_message(sid, "user", "hello there")
    mid = eng.add_memory("alice likes tea", agent="alice")
    assert eng.memories.list(agent=evil) == []
    assert eng.sessions.list(agent=evil) == [] and eng.sessions.list(text=evil) == []
    assert eng.search("tea", agent=evil, mode="keyword").hits == []
    assert eng.sessions.search_messages("hello", session_id=evil) == []
    assert eng.sessions.search_messages("hello", agent=evil) == []
    assert eng.audit.log(actor=evil) == [] and eng.audit.log(target=f"memory:{evil}") == []
    with pytest.raises(EngineError):
        eng.search("tea", tier=evil)
    with pytest.raises(EngineError):
        eng.rules.list(order=evil)
    assert eng.memories.get(mid).content == "alice likes tea"  # nothing was deleted
    assert len(eng.memories.list()) == 1


# -- foreign databases --------------------------------------------------------------------------------
def _files(folder: Path) -> dict[str, tuple[str, int]]:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in folder.iterdir()
    }


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_opening_a_foreign_database_never_writes_to_it(tmp_path, journal):
    """Pointing --db at an agent's own state.db (tables sessions/messages, not ours) is refused
    before anything is written: not our schema, not the WAL switch, not even a -wal/-shm file."""
    home = tmp_path / "hermes"
    home.mkdir()
    db = home / "state.db"
    c = sqlean.connect(str(db))
    c.execute(f"PRAGMA journal_mode={journal}")
    c.executescript("""
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, started_at REAL NOT NULL);
        CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT,
                               timestamp REAL);
        INSERT INTO sessions VALUES ('h1', 'cli', 1700000000);
        INSERT INTO messages(session_id, role, content, timestamp) VALUES ('h1', 'user', 'hi', 1);
    """)
    c.close()
    before = _files(home)
    with pytest.raises(EngineError, match="not a memconsole database"):
        open_engine(db, embedder=None)
    p = subprocess.run(
        [sys.executable, "-m", "console.cli", "--db", str(db), "sessions"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "not a memconsole database" in p.stderr
    assert _files(home) == before


def test_a_running_agents_database_is_not_touched_either(tmp_path):
    """The agent holds its WAL open (no checkpoint), as a live Hermes does."""
    db = tmp_path / "state.db"
    live = sqlean.connect(str(db), isolation_level=None)
    live.execute("PRAGMA journal_mode=wal")
    live.execute("PRAGMA wal_autocheckpoint=0")
    live.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
    live.execute("INSERT INTO sessions VALUES ('h1')")
    try:
        before = _files(tmp_path)
        with pytest.raises(EngineError, match="not a memconsole database"):
            open_engine(db, embedder=None)
        assert _files(tmp_path) == before
    finally:
        live.close()


def test_a_tampered_undo_snapshot_cannot_inject_sql(eng):
    """Undo writes prior rows back column for column; the column names come from a stored
    snapshot, so a forged key must be refused, not spliced into the UPDATE."""
    import json

    from engine import InvalidInput
    from tests.engine.curator_helpers import OTHER, TWIN_A, TWIN_B, dump

    a = eng.add_memory(TWIN_A, agent="atlas", importance=0.9, dedup=False)
    eng.add_memory(TWIN_B, agent="atlas", dedup=False)
    eng.add_memory(OTHER, agent="atlas", dedup=False)
    pid = eng.curator.run().proposals[0].id
    eng.curator.approve(pid, reason="same fact")
    c = direct(eng.store)
    snap = json.loads(c.execute("SELECT snapshot FROM proposals WHERE id = ?", (pid,)).fetchone()[0])
    row = snap["before"]["memories"][str(a)]
    row["content = 'pwned', tier"] = row.pop("tier")
    c.execute("UPDATE proposals SET snapshot = ? WHERE id = ?", (json.dumps(snap), pid))
    before = dump(eng)
    with pytest.raises(InvalidInput, match="unknown memories column"):
        eng.curator.undo(pid, reason="tampered")
    assert dump(eng) == before
    assert "pwned" not in {m.content for m in eng.memories.list(tier="all", limit=50)}
