"""Issue 12 (trust), forget: never through links, never outside the database's folder (report
files and folders, the seal folder, a database reached through a symlink). Split from
test_forget_reach_and_resume."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from engine import EngineError, HashEmbedder, open_engine
from tests.direct_sql import direct
from tests.engine.forget.forget_places import (
    CANARY,
    SECRET,
    TWIN,
)

pytestmark = pytest.mark.backends


# -- 5. never through links, never outside the database's folder ----------------------------------------
def _seed_curator(eng):
    eng.add_memory(SECRET, dedup=False)
    eng.add_memory(TWIN, dedup=False)


@pytest.mark.sqlite_only(
    "the SQLite file's bytes and the report folders beside it (a server's live under the state dir)"
)
def test_a_symlinked_curator_folder_is_refused_by_the_curator_and_forget(eng, db_path, tmp_path):
    outside = tmp_path.parent / (tmp_path.name + "-outside")
    outside.mkdir()
    (db_path.parent / "curator").symlink_to(outside, target_is_directory=True)
    _seed_curator(eng)
    with pytest.raises(EngineError, match="symbolic link") as ei:
        eng.curator.run()
    assert "\n" not in str(ei.value)
    assert list(outside.iterdir()) == []
    n = direct(eng.store).one("SELECT count(*) FROM memories")[0]
    with pytest.raises(EngineError, match="symbolic link"):
        eng.forget.run("query", CANARY, "x")
    assert direct(eng.store).one("SELECT count(*) FROM memories")[0] == n  # nothing lost


@pytest.mark.parametrize("kind", ["symlink-inside", "symlink-outside", "hardlink"])
def test_a_linked_report_file_is_refused_and_its_target_untouched(eng, db_path, tmp_path, kind):
    _seed_curator(eng)
    run = eng.curator.run()
    folder = Path(run.report_dir)
    target = (
        folder / "run.json" if kind == "symlink-inside" else tmp_path.parent / f"{tmp_path.name}-{kind}.txt"
    )
    if kind != "symlink-inside":
        target.write_text(f"outside file quoting {SECRET}")
    before = target.read_bytes()
    link = folder / "extra.md"
    if kind == "hardlink":
        os.link(target, link)
    else:
        link.symlink_to(target)
    with pytest.raises(EngineError, match="link") as ei:
        eng.forget.run("query", CANARY, "x")
    assert "\n" not in str(ei.value)
    assert target.read_bytes() == before
    assert direct(eng.store).one("SELECT count(*) FROM memories")[0] == 2


@pytest.mark.sqlite_only(
    "the SQLite file's bytes and the report folders beside it (a server's live under the state dir)"
)
def test_report_folders_are_created_private_and_checked(eng, db_path):
    root = db_path.parent / "curator"
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)
    _seed_curator(eng)
    folder = Path(eng.curator.run().report_dir)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700  # checked and tightened, not assumed
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()} == {0o600}


@pytest.mark.sqlite_only(
    "the SQLite file's bytes and the report folders beside it (a server's live under the state dir)"
)
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the folder to another user")
def test_a_curator_folder_owned_by_another_user_is_refused(eng, db_path):
    root = db_path.parent / "curator"
    root.mkdir(mode=0o700)
    os.chown(root, 12345, 12345)
    _seed_curator(eng)
    with pytest.raises(EngineError, match="another user"):
        eng.curator.run()


def test_a_database_reached_through_a_symlink_is_still_verified(tmp_path):
    real = tmp_path / "data"
    real.mkdir()
    open_engine(real / "memory.db", embedder=HashEmbedder()).close()
    link = tmp_path / "memory.db"
    link.symlink_to(real / "memory.db")
    e = open_engine(link, embedder=HashEmbedder())
    try:
        e.add_memory(SECRET, dedup=False)
        res = e.forget.run("query", CANARY, "through a link")
        assert res.status == "verified" and set(res.verification.files) >= {"memory.db", "memory.db-wal"}
    finally:
        e.close()


@pytest.mark.sqlite_only(
    "the SQLite file's bytes and the report folders beside it (a server's live under the state dir)"
)
def test_a_symlinked_seal_folder_is_refused_and_nothing_is_forgotten(eng, db_path, tmp_path):
    outside = tmp_path.parent / (tmp_path.name + "-seal-outside")
    outside.mkdir()
    (db_path.parent / "forget").symlink_to(outside, target_is_directory=True)
    eng.add_memory(SECRET, dedup=False)
    with pytest.raises(EngineError, match="symbolic link") as ei:
        eng.forget.run("query", CANARY, "x")
    assert "\n" not in str(ei.value) and list(outside.iterdir()) == []
    assert direct(eng.store).one("SELECT count(*) FROM memories")[0] == 1  # rolled back whole
    case = eng.forget.list()[0]
    assert case.status == "previewed"
