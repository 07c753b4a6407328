"""Issue 12 "Trust", export: it replaces only a regular file, privately, never through a planted
temp, and never the database's own files, which no import opens either (split from
test_import_input_checks)."""

from __future__ import annotations

import hashlib
import json
import os
import stat

import pytest

from engine import HashEmbedder, ImportFailed, open_engine
from tests.engine.hermes_fixture import HermesHome
from tests.engine.importers.door_checks import T, cli, counts, deadline

pytestmark = pytest.mark.backends


# -- 3: export replaces only a regular file ------------------------------------------------------
def _sha(p) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_export_force_refuses_symlinks_fifos_and_devices(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    assert cli(tmp_path, capsys, "add", "one memory")[0] == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "link.jsonl"
    link.symlink_to(victim)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with deadline(60):
        for target in (link, fifo):
            code, _, err = cli(tmp_path, capsys, "export", "jsonl", str(target), "--force")
            assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
        code, _, err = cli(tmp_path, capsys, "export", "jsonl", "/dev/null", "--force")
        assert code == 2 and "character device" in err
    assert link.is_symlink() and victim.read_text() == "keep me"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "nowhere")
    assert cli(tmp_path, capsys, "export", "jsonl", str(dangling))[0] == 2
    assert not (tmp_path / "nowhere").exists()


def test_export_is_0600_never_follows_a_planted_temp_and_force_replaces_a_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    old = os.umask(0)
    try:
        assert cli(tmp_path, capsys, "add", "one memory")[0] == 0
        out = tmp_path / "out.jsonl"
        assert cli(tmp_path, capsys, "export", "jsonl", str(out))[0] == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
        assert cli(tmp_path, capsys, "export", "jsonl", str(out))[0] == 2  # exists, no --force
        assert cli(tmp_path, capsys, "export", "jsonl", str(out), "--force")[0] == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
    finally:
        os.umask(old)
    eng = open_engine(tmp_path / "cli.db", embedder=HashEmbedder(), actor="t")
    try:
        victim = tmp_path / "victim.txt"
        victim.write_text("keep me")
        (tmp_path / f".planted.jsonl.tmp-{os.getpid()}").symlink_to(victim)
        # The temporary file lives in a private folder of the database's home (engine/tempfiles.py),
        # so a link planted where it used to be is never even looked at.
        eng.importers.export_jsonl(tmp_path / "planted.jsonl")
        assert victim.read_text() == "keep me"
        assert (tmp_path / f".planted.jsonl.tmp-{os.getpid()}").is_symlink()
    finally:
        eng.close()


def test_a_hermes_import_under_a_tmpdir_with_uri_characters_reads_its_copy(eng, tmp_path, monkeypatch):
    odd = tmp_path / "t#m?p%20"
    odd.mkdir()
    monkeypatch.setenv("TMPDIR", str(odd))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    h = HermesHome(tmp_path / "hermes", version=2)
    h.session("s1", started=T)
    h.message("s1", "user", "hello", T + 1)
    h.close()
    assert eng.importers.hermes(tmp_path / "hermes").added.get("messages") == 1


def test_an_oversized_skill_or_usage_file_is_skipped_with_a_warning(eng, tmp_path, monkeypatch):
    from engine.importers import files

    monkeypatch.setattr(files, "MAX_FILE_BYTES", 1000)
    home = tmp_path / "hermes"
    (home / "skills" / "big").mkdir(parents=True)
    (home / "skills" / "big" / "SKILL.md").write_text("---\nname: big\n---\n1. " + "x" * 2000)
    (home / "skills" / "small").mkdir()
    (home / "skills" / "small" / "SKILL.md").write_text("---\nname: small\n---\n1. go\n")
    (home / "skills" / ".usage.json").write_text(json.dumps({"pad": "y" * 2000}))
    s = eng.importers.hermes(home)
    assert s.added.get("skills") == 1
    assert sum("over 1,000" in w or "files over" in w for w in s.warnings) == 2, s.warnings


# -- the database's own files: never opened by an import, never replaced by an export -----------
@pytest.mark.sqlite_only("about the SQLite file and its -wal/-shm")
def test_imports_never_open_the_databases_own_files(eng):
    """Closing any descriptor of a file drops every POSIX lock this process holds on it, SQLite's
    included: no importer opens the database, its -wal or its -shm, by any name (stat first)."""
    from pathlib import Path

    from engine.importers.files import database_files

    eng.add_memory("held while the imports are refused", dedup=False)
    db = Path(eng.path)
    wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
    assert wal.exists() and shm.exists()
    alias = db.parent / "MEMORY.md"
    os.link(db, alias)  # another name for the same file
    home = db.parent / "hermes"
    home.mkdir()
    os.link(wal, home / "state.db")  # a Hermes home whose state.db is our -wal
    real_open, opened = os.open, []

    def spy(path, *args, **kwargs):
        opened.append(os.stat(path).st_ino if os.path.exists(path) else None)
        return real_open(path, *args, **kwargs)

    before = counts(eng)
    own = {ino for _, ino in database_files(db)}
    try:
        os.open = spy
        for call in (
            lambda: eng.importers.markdown(db, agent="a"),
            lambda: eng.importers.markdown(alias, agent="a"),
            lambda: eng.importers.ingest(wal),
            lambda: eng.importers.jsonl(shm),
            lambda: eng.importers.hermes(home),
        ):
            with pytest.raises(ImportFailed, match="own file"):
                call()
    finally:
        os.open = real_open
    assert not own & set(opened)
    assert counts(eng) == before
    assert eng.search("held while", mode="keyword").hits


@pytest.mark.sqlite_only("about the SQLite file and its -wal/-shm")
def test_export_force_never_replaces_the_database_or_its_wal_shm(eng, tmp_path, capsys, monkeypatch):
    from pathlib import Path

    from engine import InvalidInput

    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    assert cli(tmp_path, capsys, "add", "one memory")[0] == 0
    db = tmp_path / "cli.db"
    for target in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        code, _, err = cli(tmp_path, capsys, "export", "jsonl", str(target), "--force")
        assert code == 2 and "own file" in err and "Traceback" not in err
    assert cli(tmp_path, capsys, "search", "one memory", "--mode", "keyword")[0] == 0
    # Through the engine too, and by another name (a hard link) for the live file.
    eng.add_memory("still here", dedup=False)
    alias = Path(eng.path).parent / "copy.jsonl"
    os.link(eng.path, alias)
    for target in (Path(eng.path), Path(f"{eng.path}-wal"), alias):
        with pytest.raises(InvalidInput, match="own file"):
            eng.importers.export_jsonl(target, overwrite=True)
    assert eng.search("still here", mode="keyword").hits
