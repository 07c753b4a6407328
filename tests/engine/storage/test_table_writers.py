"""Each table has exactly one writer (issue #23, STYLE.md "Services and storage"): in each adapter,
every INSERT INTO, UPDATE and DELETE FROM that names one of the engine's tables sits in that
table's gateway (`engine/storage/<adapter>/gateways/<table>.py`), and services call the gateway
on the connection (`conn.<table>`); outside engine/storage/ there is no SQL at all
(tests/test_services_hold_no_sql.py). Checked on the SQL text itself: every string literal
(f-strings with their holes as `{}`) of every adapter module.

Known exceptions, on purpose, listed in ALSO with why: the adapters' own parts that write a
table in bulk by a rule rather than row by row (the decay pass, doctor's repair), the schema's
triggers and upgrade stamps. Writers whose table name is a value (`INSERT INTO {table}`: the
column-by-column helpers, the dump's bulk copy, the eraser's fixed list of scrubbed places) are
not counted by name."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

from engine.storage.tables import TABLES

ROOT = Path(__file__).resolve().parents[3]
ADAPTERS = ("sqlite", "postgres")
# (adapter, table) -> other modules of that adapter allowed to write it, and why
ALSO = {
    ("sqlite", "memories"): {
        "health.py": "doctor --repair marks memories whose vector is missing for re-embedding",
        "schema.py": "the triggers that keep the indexes and the change log in step",
    },
    ("postgres", "memories"): {
        "decay.py": "the decay pass's set-based strength/tier updates (the DecayAccess part)",
        "health.py": "doctor --repair marks memories whose vector is missing for re-embedding",
        "vector.py": "a reembed's switch marks memories without a staged vector for re-embedding",
    },
    ("sqlite", "meta"): {"upgrade.py": "the schema upgrade records its generation"},
    ("postgres", "meta"): {"opening.py": "reconcile records the schema's hash and generation"},
    ("postgres", "audit"): {"schema_triggers.py": "the trigger that numbers the chain (audit.seq)"},
}
WRITE = re.compile(r"\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+(\"?\w+\"?)")
DOMAIN = {t.name for t in TABLES} - {"vector_changes"}  # the change log: the adapters' own


def _literals(tree: ast.AST) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
    return out


def writers(adapter_dir: Path) -> dict[str, set[str]]:
    """table -> the adapter's modules naming it in a write."""
    named: dict[str, set[str]] = {}
    for path in sorted(adapter_dir.rglob("*.py")):
        rel = path.relative_to(adapter_dir).as_posix()
        for text in _literals(ast.parse(path.read_text(encoding="utf-8"), rel)):
            for m in WRITE.finditer(text):
                named.setdefault(m.group(1).strip('"'), set()).add(rel)
    return named


def problems(adapter: str, adapter_dir: Path) -> list[str]:
    named = writers(adapter_dir)
    out = []
    for table in sorted(DOMAIN):
        allowed = {f"gateways/{table}.py", *ALSO.get((adapter, table), {})}
        extra = named.get(table, set()) - allowed
        if extra:
            out.append(f"{adapter}: {table} is also written by {sorted(extra)}, not only its gateway")
    return out


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_each_table_has_exactly_one_writer(adapter):
    assert problems(adapter, ROOT / "engine" / "storage" / adapter) == []


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_the_listed_exceptions_still_exist(adapter):
    """An exception that no longer writes is dropped from ALSO (the list stays true)."""
    named = writers(ROOT / "engine" / "storage" / adapter)
    stale = [
        f"{table}: {mod}"
        for (ad, table), mods in ALSO.items()
        if ad == adapter
        for mod in mods
        if mod not in named.get(table, set())
    ]
    assert stale == []


def test_every_table_has_a_gateway_in_both_adapters():
    for adapter in ADAPTERS:
        have = {p.stem for p in (ROOT / "engine" / "storage" / adapter / "gateways").glob("*.py")}
        assert have >= DOMAIN, (adapter, sorted(DOMAIN - have))


def test_a_planted_second_writer_is_caught(tmp_path):
    gw = tmp_path / "gateways"
    gw.mkdir()
    (gw / "proposals.py").write_text('Q = "DELETE FROM proposals WHERE id = ?"\n')
    assert problems("sqlite", tmp_path) == []
    (tmp_path / "rogue.py").write_text(textwrap.dedent('''
        def f(conn, ids):
            conn.execute(
                "UPDATE proposals SET status = 'x'"
                " WHERE id = ?", (1,))
            conn.execute(f"DELETE FROM messages WHERE id IN ({ids})")
    '''))  # fmt: skip
    found = problems("sqlite", tmp_path)
    assert any(p.startswith("sqlite: proposals ") and "rogue.py" in p for p in found), found
    assert any(p.startswith("sqlite: messages ") and "rogue.py" in p for p in found), found
