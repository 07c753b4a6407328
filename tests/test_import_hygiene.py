"""The engine runs without the UI, and quick verbs never pay for the model import."""
import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_engine_imports_no_ui():
    mods = _modules_after("import engine")
    assert not {m for m in mods if m.split(".")[0] in ("textual", "rich", "console", "screens")}
    assert "sentence_transformers" not in mods and "torch" not in mods


def test_keyword_verbs_do_not_import_sentence_transformers(tmp_path):
    db = tmp_path / "m.db"
    code = (f"from console.cli import main\n"
            f"main(['--db', {str(db)!r}, 'sessions', '--json'])\n"
            f"main(['--db', {str(db)!r}, 'messages', 'hello', '--json'])\n")
    assert "sentence_transformers" not in _modules_after(code)
