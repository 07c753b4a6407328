"""The storage layout is a house rule checked here as well as by import-linter: both adapters have
the same file set, named for the same ideas, and the port (every module directly under
engine/storage/ but the factory, __init__.py) never imports an adapter, not even inside a
function; neither adapter imports the other."""

import ast
from pathlib import Path

import pytest

STORAGE = Path(__file__).resolve().parent.parent / "engine" / "storage"
ADAPTERS = ("sqlite", "postgres")
# The parts every adapter has, one file each (a backend's own extras may sit beside them).
SHARED = {"store", "schema", "keyword", "vector", "eraser", "health", "dump", "decay", "curator", "audit"}


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, at the top or inside a function (`from a import b` counts as
    both `a` and `a.b`: b may be a module)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def _touches(imported: set[str], package: str) -> list[str]:
    return sorted(m for m in imported if m == package or m.startswith(package + "."))


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_each_adapter_has_the_shared_file_set(adapter):
    names = {p.stem for p in (STORAGE / adapter).glob("*.py")}
    assert names >= SHARED, f"{adapter} lacks {sorted(SHARED - names)}"


def test_the_port_never_imports_an_adapter():
    port = [p for p in sorted(STORAGE.glob("*.py")) if p.name != "__init__.py"]
    assert {"port", "tables", "health"} <= {p.stem for p in port}
    found = {
        p.name: hits
        for p in port
        if (hits := [m for a in ADAPTERS for m in _touches(_imports(p), f"engine.storage.{a}")])
    }
    assert found == {}


@pytest.mark.parametrize("adapter, other", [("sqlite", "postgres"), ("postgres", "sqlite")])
def test_an_adapter_never_imports_the_other(adapter, other):
    found = {
        p.name: hits
        for p in sorted((STORAGE / adapter).glob("*.py"))
        if (hits := _touches(_imports(p), f"engine.storage.{other}"))
    }
    assert found == {}
