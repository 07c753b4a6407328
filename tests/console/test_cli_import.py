"""`memconsole import hermes|markdown|jsonl` and `export jsonl`, called in-process."""

import json
import stat

import pytest

from console.cli import main
from tests.engine.hermes_fixture import file_digests
from tests.engine.importers.test_hermes_import import build_v2


@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")

    def _run(*args, db="a.db"):
        code = main(["--db", str(tmp_path / db), *args])
        out, err = capsys.readouterr()
        return code, out, err

    return _run


def test_import_hermes_summary_then_nothing_new(run, tmp_path):
    h = build_v2(tmp_path / "hermes")
    h.close()
    before = file_digests(h.root)
    code, out, err = run("import", "hermes", str(h.root), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["added"]["sessions"] == 3 and doc["added"]["memories"] == 5 and doc["vectors"] == 0
    assert doc["skipped"] == {"skill bundled with Hermes, never patched by the agent": 1}
    code, out, _ = run("import", "hermes", str(h.root))
    assert code == 0 and "nothing new" in out and "skipped 3: session already imported" in out
    assert file_digests(h.root) == before
    code, out, _ = run("sessions", "--json")
    assert {s["id"] for s in json.loads(out)} == {"s1", "s2", "s3"}


def test_import_hermes_dry_run_and_embed(run, tmp_path):
    h = build_v2(tmp_path / "hermes")
    h.close()
    code, out, _ = run("import", "hermes", str(h.root), "--dry-run")
    assert code == 0 and "would import" in out and "dry run: nothing was written" in out
    code, out, _ = run("sessions", "--json")
    assert json.loads(out) == []
    code, out, _ = run("import", "hermes", str(h.root), "--embed", "--agent", "ops", "--json")
    assert json.loads(out)["vectors"] == 8  # 5 memory entries + 3 skills


def test_import_markdown(run, tmp_path):
    p = tmp_path / "MEMORY.md"
    p.write_text("one fact\n§\nanother fact")
    code, out, err = run("import", "markdown", str(p), "--agent", "a")
    assert code == 0 and out.startswith("imported from") and "2 memories" in out
    code, out, err = run("import", "markdown", str(p))
    assert code != 0 and "--agent" in err


def test_export_import_jsonl_roundtrip_and_private_file(run, tmp_path):
    h = build_v2(tmp_path / "hermes")
    h.close()
    run("import", "hermes", str(h.root), "--embed")
    f = tmp_path / "dump.jsonl"
    code, out, err = run("export", "jsonl", str(f), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["records"]["session"] == 3 and doc["vectors"] == 8
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    code, _, err = run("export", "jsonl", str(f))
    assert code != 0 and "--force" in err
    code, out, err = run("import", "jsonl", str(f), "--json", db="b.db")
    assert code == 0, err
    assert json.loads(out)["added"] == doc["records"]
    f2 = tmp_path / "dump2.jsonl"
    run("export", "jsonl", str(f2), db="b.db")
    a = f.read_text().splitlines()[1:]
    b = f2.read_text().splitlines()[1:]
    extra = [x for x in b if x not in set(a)]  # only the import's own audit row is new
    assert len(extra) == 1 and '"action":"import"' in extra[0]
    assert [x for x in b if x != extra[0]] == a


def test_bad_jsonl_line_is_one_clear_line(run, tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"type":"header","format":"memconsole-jsonl","version":1}\nnot json\n')
    code, out, err = run("import", "jsonl", str(p))
    assert code == 2 and err.count("\n") == 1 and f"{p}:2: not valid JSON" in err
    assert "Traceback" not in err
