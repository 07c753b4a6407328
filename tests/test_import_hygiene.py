"""The engine runs without the UI, and quick verbs never pay for the model import."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UI = ("textual", "rich", "click", "console", "screens")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return set(out.stdout.split())


def _engine_packages() -> dict[str, list[str]]:
    """`engine` and every package under it (storage, storage.sqlite, retrieval, lifecycle, ...),
    each with the modules directly inside it."""
    found: dict[str, list[str]] = {"engine": []}
    for info in pkgutil.walk_packages([str(ROOT / "engine")], prefix="engine."):
        if info.ispkg:
            found.setdefault(info.name, [])
        else:
            found.setdefault(info.name.rpartition(".")[0], []).append(info.name)
    return found


def test_every_engine_package_is_found():
    pkgs = _engine_packages()
    assert {"engine.storage", "engine.storage.sqlite", "engine.retrieval", "engine.lifecycle"} <= set(pkgs)
    assert "engine.engine" in pkgs["engine"]


@pytest.mark.parametrize("package", sorted(_engine_packages()))
def test_engine_imports_no_ui(package):
    """Each engine package and its modules, imported in a fresh interpreter, pull in no screen,
    CLI or terminal library, and not the embedding model either."""
    modules = [package, *_engine_packages()[package]]
    mods = _modules_after("\n".join(f"import {m}" for m in modules))
    assert set(modules) <= mods
    assert not sorted(m for m in mods if m.split(".")[0] in UI)
    assert "sentence_transformers" not in mods and "torch" not in mods


def test_keyword_verbs_do_not_import_sentence_transformers(tmp_path):
    db = tmp_path / "m.db"
    code = (
        f"from console.cli import main\n"
        f"main(['--db', {str(db)!r}, 'sessions', '--json'])\n"
        f"main(['--db', {str(db)!r}, 'messages', 'hello', '--json'])\n"
    )
    assert "sentence_transformers" not in _modules_after(code)
