"""SQLite-only SQL lives in engine/storage/sqlite/ and nowhere else (PostgreSQL cannot run it).

Reads every string literal of the engine that looks like SQL and fails on a SQLite-only construct
outside the SQLite adapter; also `lastrowid` in code (portable SQL says `RETURNING id`)."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[1] / "engine"
# A source format, not our storage: Hermes keeps its sessions in its own SQLite file.
ALLOWED = {"engine/importers/hermes.py", "engine/importers/hermes_live.py"}
SQLISH = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|PRAGMA|WHERE|FROM|JOIN)\b")
SQLITE_ONLY = re.compile(
    r"\bMATCH\b|\bbm25\(|\bsnippet\(|\bvec0\b|memories_vec|\bPRAGMA\b|sqlite_master|sqlite_sequence"
    r"|\bGLOB\b|\browid\b|INDEXED BY|json_each|INSERT OR |\bvec_distance|_fts\b|_tri\b|wal_checkpoint"
)


def _strings(path: Path):
    toks = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for tok in toks:
        if tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            yield tok.start[0], tok.string


def leaks(engine: Path = ENGINE) -> list[str]:
    out = []
    adapter = engine / "storage" / "sqlite"
    for f in sorted(engine.rglob("*.py")):
        if adapter in f.parents:
            continue
        rel = f.relative_to(engine.parent)
        if str(rel) in ALLOWED:
            continue
        for line, s in _strings(f):
            if SQLISH.search(s) and SQLITE_ONLY.search(s):
                out.append(f"{rel}:{line}: {SQLITE_ONLY.search(s).group(0)}")
        for no, text in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if ".lastrowid" in text:
                out.append(f"{rel}:{no}: lastrowid")
    return out


def test_no_sqlite_only_sql_outside_the_sqlite_adapter():
    assert leaks() == []


def test_the_check_catches_a_leak(tmp_path):
    """The detector itself works: a planted FTS5 query outside the adapter is reported."""
    pkg = tmp_path / "engine"
    (pkg / "storage" / "sqlite").mkdir(parents=True)
    (pkg / "leaky.py").write_text('Q = "SELECT id FROM memories_fts WHERE memories_fts MATCH ?"\n')
    (pkg / "storage" / "sqlite" / "ok.py").write_text('Q = "SELECT bm25(memories_fts) FROM x"\n')
    found = leaks(pkg)
    assert found and found[0].startswith("engine/leaky.py:1:")
    assert not any("ok.py" in x for x in found)
