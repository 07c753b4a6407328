"""Issue 12 "Trust", imports: bounded imports (YAML bombs, FIFOs, devices, symlinks, depth) and
oversized or oddly placed files (split from test_import_input_checks)."""

from __future__ import annotations

import os
import socket
import stat
import time
import tracemalloc

import pytest

from engine import ImportFailed
from tests.direct_sql import direct
from tests.engine.importers.door_checks import counts, deadline

pytestmark = pytest.mark.backends


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
