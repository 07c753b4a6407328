"""Services hold no SQL (issue #23): every statement lives in engine/storage/, each adapter in its
own dialect, reached through the gateways and read models on the connection. Outside
engine/storage/ no string literal reads as SQL, no code runs a statement (`.execute`,
`.executemany`, `store.read`, `store.read_one`, `store.conn`), and `conn: Any` is rare (the typed
`Connection` is what gateways receive).

Allowed: a source format we import from, not our storage (a Hermes agent's own state.db)."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "engine"
SOURCE_FORMATS = {"engine/importers/hermes.py", "engine/importers/hermes_live.py"}
SQL = re.compile(
    r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX|TRIGGER)"
    r"|ALTER\s+TABLE\s+\w+\s+(ADD|DROP|RENAME)|DROP\s+(TABLE|INDEX)|PRAGMA\s)",
    re.IGNORECASE | re.DOTALL,
)
# A statement run on a connection or store (a service's own `execute` verb, e.g. forget's, is not).
RUNS = re.compile(r"(?<!self)(?<!forget)\.(execute|executemany|read_one)\(|\bstore\.read\(|\bstore\.conn\b")
CONN_ANY = re.compile(r"\bconn: Any\b")
CONN_ANY_MAX = 10


def _strings(path: Path):
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            yield tok.start[0], tok.string


def services(engine: Path = ENGINE):
    for f in sorted(engine.rglob("*.py")):
        rel = f.relative_to(engine.parent).as_posix()
        if rel.startswith("engine/storage/") or rel in SOURCE_FORMATS:
            continue
        yield rel, f


def sql_in_services(engine: Path = ENGINE) -> list[str]:
    out = []
    for rel, f in services(engine):
        out += [f"{rel}:{line}: {s[:60]}" for line, s in _strings(f) if SQL.search(s)]
        for no, text in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            code = text.split("#", 1)[0]
            if RUNS.search(code):
                out.append(f"{rel}:{no}: runs a statement: {text.strip()[:60]}")
    return out


def test_no_sql_and_no_statement_outside_engine_storage():
    assert sql_in_services() == []


PORT_SQL = re.compile(
    r"\b(SELECT\s[^\n]*\sFROM|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE (TABLE|INDEX|TRIGGER))"
)


def sql_in_the_port(storage: Path = ENGINE / "storage") -> list[str]:
    """The port's own modules (protocols, gateways' and read models' classes) hold no SQL: each
    adapter writes its own."""
    files = [*storage.glob("*.py"), *(storage / "gateways").glob("*.py"), *(storage / "queries").glob("*.py")]
    return [
        f"{f.relative_to(storage.parents[1]).as_posix()}:{line}: {s[:60]}"
        for f in sorted(files)
        for line, s in _strings(f)
        if PORT_SQL.search(s)
    ]


def test_the_port_holds_no_sql():
    assert sql_in_the_port() == []


def test_conn_any_is_rare():
    found = [
        f"{f.relative_to(ROOT).as_posix()}:{no}"
        for face in ("engine", "console", "screens")
        for f in sorted((ROOT / face).rglob("*.py"))
        for no, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if CONN_ANY.search(line)
    ]
    assert len(found) <= CONN_ANY_MAX, found


def test_the_check_catches_sql_and_a_statement(tmp_path):
    pkg = tmp_path / "engine"
    (pkg / "storage" / "sqlite").mkdir(parents=True)
    (pkg / "svc.py").write_text('Q = "SELECT id FROM memories WHERE id = ?"\n')
    (pkg / "run.py").write_text("def f(conn):\n    return conn.execute(Q)\n")
    (pkg / "prose.py").write_text('WHY = "select the rows an operator named"\n')
    (pkg / "storage" / "sqlite" / "ok.py").write_text('Q = "DELETE FROM memories WHERE id = ?"\n')
    found = sql_in_services(pkg)
    assert any(x.startswith("engine/svc.py:1:") for x in found)
    assert any(x.startswith("engine/run.py:2:") for x in found)
    assert not any("prose.py" in x or "ok.py" in x for x in found)
