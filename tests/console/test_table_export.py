"""console/shared/table_export.py: hostile paths refused in one line, no overwrite without asking,
no terminal escape or spreadsheet formula in the file (issue #27 export)."""

from __future__ import annotations

import csv
import json
import os

import pytest

from console.shared.table_export import ExportExists, TableView, render, resolve_target, write_export
from engine.errors import InvalidInput

VIEW = TableView(
    pane="Search",
    table="results",
    title="results (3)",
    columns=("id", "content", "score"),
    rows=(
        ("1", "=cmd|' /C calc'!A0", "-0.5"),
        ("2", "plain \x1b]0;pwned\x07 \u202eevil", "+3"),
        ("3", "@SUM(A1)\nnext line", "12"),
    ),
    sort="score ▲",
    meta={"exported_by": "tester"},
)


def test_csv_neutralises_formulas_and_escapes_but_keeps_numbers():
    text = render(VIEW, "csv")
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    rows = list(csv.reader(text.splitlines(keepends=True)))
    assert rows[0] == ["id", "content", "score"]
    assert rows[1] == ["1", "'=cmd|' /C calc'!A0", "-0.5"]  # a number stays a number
    assert rows[2][1] == "plain \\x1b]0;pwned\\x07 \\u202eevil" and rows[2][2] == "+3"
    assert rows[3][1] == "'@SUM(A1)\nnext line"


def test_json_keeps_the_text_escaped_and_says_where_it_came_from():
    text = render(VIEW, "json")
    assert "\x1b" not in text and "\u202e" not in text
    doc = json.loads(text)
    assert doc["table"] == "results" and doc["sort"] == "score ▲" and doc["exported_by"] == "tester"
    assert doc["rows"][0] == {"id": "1", "content": "=cmd|' /C calc'!A0", "score": "-0.5"}
    assert doc["rows"][1]["content"] == "plain \\x1b]0;pwned\\x07 \\u202eevil"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "a file name is required"),
        ("   ", "a file name is required"),
        ("a\x1b[2Jb.csv", "control character"),
        ("x" * 2000, "longer than"),
        ("missing/dir/x.csv", "does not exist"),
        ("sub/", "is a directory"),
    ],
)
def test_hostile_paths_are_refused_in_one_line(tmp_path, text, says):
    (tmp_path / "sub").mkdir()
    with pytest.raises(InvalidInput) as e:
        resolve_target(text, "csv", cwd=tmp_path)
    msg = str(e.value)
    assert says in msg and "\n" not in msg and "\x1b" not in msg and len(msg) < 400


def test_paths_resolve_relative_and_get_a_suffix(tmp_path):
    assert resolve_target("view", "json", cwd=tmp_path) == tmp_path.resolve() / "view.json"
    assert resolve_target(str(tmp_path / "a.csv"), "csv", cwd=tmp_path) == tmp_path.resolve() / "a.csv"


def test_existing_files_symlinks_and_the_database_are_never_replaced_silently(tmp_path):
    db = tmp_path / "mem.db"
    db.write_text("db")
    with pytest.raises(InvalidInput, match="database's own file"):
        resolve_target("mem.db", "csv", cwd=tmp_path, protected=[db])
    link = tmp_path / "link.csv"
    link.symlink_to(db)
    with pytest.raises(InvalidInput, match="database's own file"):
        resolve_target("link.csv", "csv", cwd=tmp_path, protected=[db])
    (tmp_path / "old.csv").write_text("keep")
    with pytest.raises(ExportExists):
        resolve_target("old.csv", "csv", cwd=tmp_path)
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(ExportExists):
        resolve_target("dangling.csv", "csv", cwd=tmp_path)
    # A file that appears between the check and the write is not replaced (exclusive create).
    with pytest.raises(ExportExists):
        write_export(tmp_path / "old.csv", "new")
    assert (tmp_path / "old.csv").read_text() == "keep"
    with pytest.raises(ExportExists):  # nor written through a dangling link
        write_export(dangling, "new")
    assert not (tmp_path / "nowhere").exists()
    assert write_export(tmp_path / "old.csv", "new", overwrite=True) == 3
    assert (tmp_path / "old.csv").read_text() == "new"
    new = tmp_path / "new.csv"
    write_export(new, "x")
    assert new.stat().st_mode & 0o777 == 0o600


def test_a_served_console_writes_only_a_file_name_into_its_folder(tmp_path):
    folder = tmp_path / "exports" / "alice"
    for bad in ("../x.csv", "/etc/passwd", "~/x.csv", "a/b.csv", ".."):
        with pytest.raises(InvalidInput, match="served console writes only into"):
            resolve_target(bad, "csv", cwd=tmp_path, confine_to=folder)
    assert resolve_target("mine", "csv", cwd=tmp_path, confine_to=folder) == folder.resolve() / "mine.csv"
    assert folder.is_dir()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_folder_is_one_line(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    with pytest.raises(InvalidInput, match="not writable"):
        resolve_target(str(ro / "x.csv"), "csv", cwd=tmp_path)
