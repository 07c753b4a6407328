"""Issue 12 "Trust", imports: input checked at the door (finite numbers, schema-shaped rows, FILE:LINE,
nothing written), bounded imports (YAML bombs, FIFOs, devices, symlinks, depth), safe export, and
forgotten content that never comes back through any importer."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import stat
import time
import tracemalloc
from contextlib import contextmanager

import pytest

from console.cli import main
from engine import HashEmbedder, ImportFailed, open_engine
from tests.direct_sql import direct
from tests.engine.hermes_fixture import HermesHome

pytestmark = pytest.mark.backends

T = 1767000000.0
HEADER = '{"type":"header","format":"memconsole-jsonl","version":1}\n'


@contextmanager
def deadline(seconds: int):
    """A test that would block forever (a FIFO opened for reading) fails instead."""

    def boom(*_):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def counts(eng) -> tuple:
    return tuple(
        direct(eng.store).one(f"SELECT count(*) FROM {t}")[0]
        for t in ("sessions", "messages", "memories", "rules", "flows", "audit")
    )


def cli(tmp_path, capsys, *args):
    code = main(["--db", str(tmp_path / "cli.db"), *args])
    out, err = capsys.readouterr()
    return code, out, err


# -- 1/5: every number finite, every row schema-shaped, FILE:LINE, nothing written ---------------
@pytest.mark.parametrize(
    "bad, what",
    [
        ('{"type":"memory","content":"x","importance":1e999}', "finite"),
        ('{"type":"memory","content":"x","importance":NaN}', "NaN"),
        ('{"type":"memory","content":"x","created_at":Infinity}', "Infinity"),
        ('{"type":"memory","content":"x","created_at":-Infinity}', "Infinity"),
        ('{"type":"memory","content":"x","message_id":1180591620717411303424}', "64 bits"),
        ('{"type":"memory","content":"x","created_at":1e300}', "between"),
        ('{"type":"memory","content":"x","metadata":{"n":NaN}}', "NaN"),
        ('{"type":"memory","content":"x","metadata":{"n":1180591620717411303424}}', "64 bits"),
        ('{"type":"message","session_id":"ok","content":"x","token_count":-3}', "between"),
        ('{"type":"message","session_id":"ok","content":"x","at":1e999}', "finite"),
        ('{"type":"session","id":"s2","started_at":"NaN"}', "s2|time|NaN"),
        ('{"type":"session","id":"s2","title":"' + "t" * 10_001 + '"}', "limit"),
    ],
    ids=lambda v: v[:48],
)
def test_ingest_refuses_bad_numbers_with_file_line_and_writes_nothing(eng, tmp_path, bad, what):
    p = tmp_path / "in.jsonl"
    p.write_text(
        '{"type":"session","id":"ok","agent":"a"}\n'
        '{"type":"memory","content":"a good line","agent":"a"}\n' + bad + "\n"
    )
    before = counts(eng)
    with pytest.raises(ImportFailed, match=rf"in\.jsonl:3: .*({what})"):
        eng.importers.ingest(p)
    assert counts(eng) == before


def test_ingest_cli_error_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    p = tmp_path / "in.jsonl"
    p.write_text('{"type":"memory","content":"ok"}\n{"type":"memory","content":"x","importance":1e999}\n')
    code, out, err = cli(tmp_path, capsys, "ingest", str(p))
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "in.jsonl:2:" in err


def test_cli_refuses_a_fifo_and_a_bad_export_line_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(HEADER + '{"type":"memory","row":{"id":7,"content":"v","importance":NaN}}\n')
    with deadline(60):
        for args in (
            ("ingest", str(fifo)),
            ("import", "jsonl", str(fifo)),
            ("import", "markdown", str(fifo), "--agent", "a"),
            ("import", "jsonl", str(bad)),
        ):
            code, _, err = cli(tmp_path, capsys, *args)
            assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, args
    assert "bad.jsonl:2:" in err and "NaN" in err
    h = HermesHome(tmp_path / "hermes", version=2)
    h.session("inf", started=float("inf"))
    h.close()
    code, _, err = cli(tmp_path, capsys, "import", "hermes", str(tmp_path / "hermes"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "session 'inf'" in err


def test_a_hermes_row_with_an_infinite_time_refuses_the_import_naming_it(eng, tmp_path):
    h = HermesHome(tmp_path / "hermes", version=2)
    h.session("ok", started=T)
    h.message("ok", "user", "fine", T + 1)
    h.session("inf", started=float("inf"))
    h.close()
    before = counts(eng)
    with pytest.raises(ImportFailed, match=r"state\.db: session 'inf': .*started_at"):
        eng.importers.hermes(tmp_path / "hermes")
    assert counts(eng) == before


def _export_line(rtype: str, row: dict, **extra) -> str:
    return json.dumps({"type": rtype, "row": row, **extra})


_VEC_NAN = __import__("base64").b64encode(b"\x00\x00\xc0\x7f" * 384).decode()
_VEC_ZERO = __import__("base64").b64encode(b"\x00" * 4 * 384).decode()
_VEC_SHORT = __import__("base64").b64encode(b"\x00\x00\x80\x3f" * 383).decode()


@pytest.mark.parametrize(
    "line, what",
    [
        ('{"type":"memory","row":{"id":7,"content":"v","importance":1e999}}', "finite"),
        ('{"type":"memory","row":{"id":7,"content":"v","importance":2}}', "importance.*between 0 and 1"),
        ('{"type":"memory","row":{"id":7,"content":"v","strength":NaN}}', "NaN"),
        ('{"type":"memory","row":{"id":1180591620717411303424,"content":"v"}}', "64 bits"),
        ('{"type":"memory","row":{"id":7,"content":"v","metadata":"not json"}}', "metadata.*not valid JSON"),
        ('{"type":"memory","row":{"id":7,"content":"v","metadata":"[1]"}}', "metadata.*object"),
        ('{"type":"memory","row":{"id":7,"content":"v","metadata":"{\\"a\\": NaN}"}}', "metadata.*NaN"),
        ('{"type":"memory","row":{"id":7,"content":"v","created_at":1e300}}', "created_at.*between"),
        ('{"type":"memory","row":{"id":7,"content":"v","access_count":-1}}', "access_count"),
        ('{"type":"memory","row":{"id":7,"content":"v","pinned":5}}', "pinned"),
        ('{"type":"memory","row":{"id":7,"content":"v","kind":"weird"}}', "kind"),
        ('{"type":"memory","row":{"id":7,"content":null}}', "null"),
        ('{"type":"memory","row":{"id":7,"content":["v"]}}', "text"),
        (_export_line("memory", {"id": 7, "content": "v"}, vector=_VEC_NAN), "NaN or infinite"),
        (_export_line("memory", {"id": 7, "content": "v"}, vector=_VEC_ZERO), "all zeros"),
        (_export_line("memory", {"id": 7, "content": "v"}, vector=_VEC_SHORT), "384 float32"),
        ('{"type":"flow","row":{"id":3,"name":"f","steps":"\\"x\\""}}', "steps.*list"),
        ('{"type":"message","row":{"id":5,"session_id":"ok","role":"hacker"}}', "role"),
        ('{"type":"rule","row":{"id":2,"text":"r","score":11}}', "score"),
        ('{"type":"audit","row":{"id":9,"at":Infinity,"actor":"x","action":"y"}}', "Infinity"),
    ],
    ids=lambda v: v[:64],
)
def test_jsonl_import_holds_every_row_to_the_schema(eng, tmp_path, line, what):
    p = tmp_path / "bad.jsonl"
    p.write_text(HEADER + '{"type":"session","row":{"id":"ok","agent":"a"}}\n' + line + "\n")
    before = counts(eng)
    with pytest.raises(ImportFailed, match=rf"bad\.jsonl:3: .*{what}"):
        eng.importers.jsonl(p)
    assert counts(eng) == before


# -- 2: bounded imports --------------------------------------------------------------------------
BOMB = """---
name: bomb
description: nine levels of aliases
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
triggers: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---
1. survive
"""


def test_a_yaml_alias_bomb_is_refused_in_seconds_with_a_warning(eng, tmp_path):
    home = tmp_path / "hermes"
    d = home / "skills" / "bomb"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(BOMB)
    tracemalloc.start()
    t0 = time.monotonic()
    with deadline(60):
        s = eng.importers.hermes(home)
    took = time.monotonic() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert took < 5 and peak < 50 * 2**20, (took, peak)
    assert any("bomb/SKILL.md" in w and ("alias" in w or "anchor" in w) for w in s.warnings), s.warnings
    assert s.added.get("skills") == 1  # the skill itself, from its plain lines


def _home_with_specials(tmp_path):
    home = tmp_path / "hermes"
    outside = tmp_path / "outside"
    (outside / "skills" / "leak").mkdir(parents=True)
    (outside / "skills" / "leak" / "SKILL.md").write_text("---\nname: leak\n---\n1. secret step\n")
    (outside / "MEMORY.md").write_text("an outside secret")
    (home / "memories").mkdir(parents=True)
    (home / "skills" / "ok").mkdir(parents=True)
    (home / "skills" / "ok" / "SKILL.md").write_text("---\nname: ok\ndescription: fine\n---\n1. go\n")
    os.mkfifo(home / "memories" / "MEMORY.md")  # would block a reader forever
    os.mkfifo(home / "skills" / "SKILL.md")
    (home / "memories" / "USER.md").symlink_to(outside / "MEMORY.md")
    (home / "skills" / "escape").symlink_to(outside / "skills")
    (home / "skills" / "ok" / "loop").symlink_to(home / "skills")  # inside, but a loop
    deep = home / "skills"
    for i in range(30):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "SKILL.md").write_text("---\nname: too-deep\n---\n1. x\n")
    os.mkfifo(home / "state.db")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(home / "skills" / "ok" / "sock"))
    (home / "skills" / "sockdir").mkdir()
    os.link(home / "skills" / "ok" / "sock", home / "skills" / "sockdir" / "SKILL.md")
    sock.close()
    return home


def test_fifos_symlinks_out_loops_and_depth_are_skipped_with_warnings(eng, tmp_path):
    home = _home_with_specials(tmp_path)
    with deadline(30):
        s = eng.importers.hermes(home)
    text = "\n".join(s.warnings)
    assert "MEMORY.md: a FIFO" in text and "skills/SKILL.md: a FIFO" in text
    assert "state.db: a FIFO" in text
    assert "USER.md: a symlink that leaves" in text and "escape: a symlink that leaves" in text
    assert "deeper than" in text and "sockdir/SKILL.md: a socket" in text
    d = direct(eng.store)
    if d.postgres:
        names = [r[0] for r in d.all("SELECT metadata::jsonb ->> 'hermes_skill' FROM memories")]
    else:
        names = [r[0] for r in d.all("SELECT json_extract(metadata, '$.hermes_skill') FROM memories")]
    assert names == ["ok"]
    assert not d.all("SELECT 1 FROM memories WHERE content LIKE '%secret%'")


def test_a_memories_folder_linked_out_of_the_home_is_not_read(eng, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "MEMORY.md").write_text("someone else's secret")
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "memories").symlink_to(outside)
    (home / "skills").symlink_to(outside)
    s = eng.importers.hermes(home)
    assert sum("a symlink that leaves" in w for w in s.warnings) == 2, s.warnings
    assert counts(eng)[2] == 0


def test_a_device_in_the_home_is_never_opened(eng, tmp_path):
    home = tmp_path / "hermes"
    (home / "memories").mkdir(parents=True)
    try:
        os.mknod(home / "memories" / "MEMORY.md", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # zero
    except PermissionError:
        pytest.skip("creating a device node needs privileges")
    with deadline(30):
        s = eng.importers.hermes(home)
    assert any("character device" in w for w in s.warnings)


def test_ingest_and_import_refuse_a_fifo_file(eng, tmp_path):
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    with deadline(30):
        for fn in (eng.importers.ingest, eng.importers.jsonl):
            with pytest.raises(ImportFailed, match="FIFO"):
                fn(fifo)
        with pytest.raises(ImportFailed, match="FIFO"):
            eng.importers.markdown(fifo, agent="a")


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
