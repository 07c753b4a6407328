"""Typed operations cross the storage port (issue #23): no code outside engine/storage/ asks which
adapter it holds (`isinstance` on a type imported from engine.storage), and the port's protocols
take filters as values, never as a `where: str` fragment of SQL.

`LEFT`: `where: str` parameters allowed in the port, named one by one: none are left (the episodic
log's scope, the decay passes' conditions and a dump's row selection are dataclasses now)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FACES = ("engine", "console", "screens")
LEFT: set[str] = set()  # every filter crosses as a value now (issue #23)


def _storage_names(tree: ast.Module) -> set[str]:
    """Names a module binds from engine.storage (its classes, or its modules as aliases)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("engine.storage"):
            out |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {
                (a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith("engine.storage")
            }
    return out


def _types(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.Tuple):
        return [t for e in node.elts for t in _types(e)]
    if isinstance(node, ast.BinOp):  # A | B
        return _types(node.left) + _types(node.right)
    return [node]


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def adapter_checks(root: Path = ROOT) -> list[str]:
    """`file:line` of every isinstance on a type from engine.storage outside engine/storage/."""
    out = []
    for face in FACES:
        for f in sorted((root / face).rglob("*.py")):
            rel = f.relative_to(root).as_posix()
            if rel.startswith("engine/storage/"):
                continue
            tree = ast.parse(f.read_text(encoding="utf-8"))
            names = _storage_names(tree)
            if not names:
                continue
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id in ("isinstance", "issubclass")
                    and len(node.args) == 2
                    and any(_root(t) in names for t in _types(node.args[1]))
                ):
                    out.append(f"{rel}:{node.lineno}")
    return out


def sql_fragments(root: Path = ROOT) -> set[str]:
    """`file: Protocol.method` of every `where: str` parameter of the port's protocols."""
    out = set()
    for f in sorted((root / "engine" / "storage").glob("*.py")):
        rel = f.relative_to(root).as_posix()
        for cls in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if not isinstance(cls, ast.ClassDef) or not any(_root(b) == "Protocol" for b in cls.bases):
                continue
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef):
                    args = fn.args.args + fn.args.kwonlyargs
                    if any(
                        a.arg == "where" and ast.unparse(a.annotation or ast.Constant(None)) == "str"
                        for a in args
                    ):
                        out.add(f"{rel}: {cls.name}.{fn.name}")
    return out


def test_no_isinstance_on_adapter_types_outside_storage():
    assert adapter_checks() == []


def test_no_new_sql_fragment_in_the_port():
    assert sql_fragments() - LEFT == set()
    assert LEFT - sql_fragments() == set(), "a listed fragment is gone: drop it from LEFT"


def test_the_checks_catch_a_leak(tmp_path):
    """The detectors themselves work on planted code."""
    (tmp_path / "engine" / "storage").mkdir(parents=True)
    (tmp_path / "console").mkdir()
    (tmp_path / "screens").mkdir()
    (tmp_path / "engine" / "svc.py").write_text(
        "from engine.storage.reach import ServerEraser\n"
        "from engine.storage import sqlite as lite\n"
        "def f(e):\n"
        "    return isinstance(e, ServerEraser) or isinstance(e, (int, lite.store.Store))\n"
        "def g(e):\n"
        "    return isinstance(e, dict)\n"
    )
    (tmp_path / "engine" / "storage" / "port.py").write_text(
        "from typing import Protocol\n"
        "class Index(Protocol):\n"
        "    def knn(self, conn, k: int, where: str, params: list) -> list: ...\n"
        "    def fine(self, conn, filters: object) -> list: ...\n"
        "class NotAPort:\n"
        "    def knn(self, where: str) -> None: ...\n"
    )
    assert adapter_checks(tmp_path) == ["engine/svc.py:4", "engine/svc.py:4"]
    assert sql_fragments(tmp_path) == {"engine/storage/port.py: Index.knn"}
