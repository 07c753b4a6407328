"""Each table has exactly one writer module (issue #23, STYLE.md "Services and storage"): every
INSERT INTO, UPDATE and DELETE FROM of these tables sits in its gateway under engine/tables/, and
services call the gateway. Checked on the SQL text itself: every string literal (f-strings with
their holes as `{}`) of every module of the application outside engine/storage/.

Known exceptions, on purpose:
- engine/storage/ (not scanned): the JSONL restore and the migrate copy whole tables through the
  store's `dump.insert_rows` (executemany / COPY), naming the table as a value, never a literal.
- Writers whose table name is a value (`INSERT INTO {table}`), listed in GENERIC with why."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCANNED = ("engine", "console", "screens")
SKIPPED = ("engine/storage/",)

# table -> the one module allowed to write it (messages belong to their session's gateway)
WRITERS = {
    "rules": "engine/tables/rules.py",
    "memories": "engine/tables/memories.py",
    "sessions": "engine/tables/sessions.py",
    "messages": "engine/tables/sessions.py",
    "rule_history": "engine/tables/rule_history.py",
    "forget_requests": "engine/tables/forget_requests.py",
    "proposals": "engine/tables/proposals.py",
}
# modules whose SQL writes a table named by a value, and why that is allowed
GENERIC = {
    "engine/tables/columns.py": "the gateways' shared row insert/update; called only by gateways",
    "engine/forget/scrub.py": "a forget redacts quoted text in a fixed list of (table, column) places",
}

WRITE = re.compile(r"\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+(\{\}|\"?\w+\"?)")


def _literals(tree: ast.AST) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
    return out


def scan(root: Path, packages=SCANNED, skipped=SKIPPED) -> tuple[dict[str, set[str]], set[str]]:
    """(table -> modules writing it by name, modules writing a table named by a value)."""
    named: dict[str, set[str]] = {}
    generic: set[str] = set()
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith(skipped):
                continue
            for text in _literals(ast.parse(path.read_text(), rel)):
                for m in WRITE.finditer(text):
                    target = m.group(1).strip('"')
                    if target == "{}":
                        generic.add(rel)
                    else:
                        named.setdefault(target, set()).add(rel)
    return named, generic


def problems(named: dict[str, set[str]], generic: set[str]) -> list[str]:
    out = [
        f"{table} is written by {sorted(named.get(table, set()))}, not only {owner}"
        for table, owner in WRITERS.items()
        if named.get(table, set()) != {owner}
    ]
    out += [f"{mod} writes a table named by a value; add it to GENERIC with why" for mod in
            sorted(generic - set(GENERIC))]  # fmt: skip
    return out


def test_each_table_has_exactly_one_writer():
    named, generic = scan(ROOT)
    assert problems(named, generic) == []


def test_generic_writers_are_only_the_known_ones():
    _, generic = scan(ROOT)
    assert generic == set(GENERIC), "a listed exception is gone: drop it from GENERIC"


def test_columns_helper_is_only_called_by_gateways():
    """columns.insert/update build `INSERT INTO {table}`: only a gateway may name the table."""
    callers = set()
    for pkg in SCANNED:
        for path in (ROOT / pkg).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if (
                "engine.tables import columns" in path.read_text()
                or "engine.tables.columns" in path.read_text()
            ):
                callers.add(rel)
    assert all(c.startswith("engine/tables/") for c in callers), sorted(callers)


def test_a_planted_second_writer_is_caught(tmp_path):
    for table, owner in WRITERS.items():
        f = tmp_path / owner
        f.parent.mkdir(parents=True, exist_ok=True)
        with f.open("a") as out:
            out.write(f'SQL_{table.upper()} = "DELETE FROM {table} WHERE id = ?"\n')
    assert problems(*scan(tmp_path, ("engine",))) == []
    rogue = tmp_path / "engine" / "forget" / "rogue.py"
    rogue.parent.mkdir(parents=True, exist_ok=True)
    rogue.write_text(textwrap.dedent('''
        def f(conn, ids, table):
            conn.execute(
                "UPDATE proposals SET status = 'x'"
                " WHERE id = ?", (1,))
            conn.execute(f"DELETE FROM messages WHERE id IN ({ids})")
            conn.execute(f"UPDATE {table} SET x = 1")
    '''))  # fmt: skip
    found = problems(*scan(tmp_path, ("engine",)))
    assert any(p.startswith("proposals ") and "engine/forget/rogue.py" in p for p in found), found
    assert any(p.startswith("messages ") and "engine/forget/rogue.py" in p for p in found), found
    assert any(p.startswith("engine/forget/rogue.py writes a table named by a value") for p in found), found
    # a write under engine/storage/ is the adapters' own (dump, schema): not counted
    (tmp_path / "engine" / "storage").mkdir()
    rogue.rename(tmp_path / "engine" / "storage" / "dump.py")
    assert problems(*scan(tmp_path, ("engine",))) == []
