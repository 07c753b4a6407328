"""Issue #12 "Trust", input at the door: control characters never reach a terminal raw, numbers
are finite and in range, `--json` is strict JSON, config values are checked at load, bad input
exits 2 with one line."""
import json
import math

import pytest

from console.cli import main
from console.text_safety import visible

HOSTILE = "note \x1b[2J\x1b]0;pwned\x07 \x9b31m \x7f \u202eevil"
RAW = ("\x1b", "\x07", "\x9b", "\x7f", "\u202e")


def _strict(s: str):
    def refuse(c):
        raise ValueError(f"non-strict JSON constant {c}")
    return json.loads(s, parse_constant=refuse)


@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    monkeypatch.setenv("MEMCONSOLE_CONFIG", str(tmp_path / "none.toml"))
    db = str(tmp_path / "a.db")

    def _run(*args, actor=None):
        code = main(["--db", db, *(["--actor", actor] if actor else []), *args])
        out, err = capsys.readouterr()
        return code, out, err
    _run.db = db
    return _run


def _no_raw(*texts):
    for t in texts:
        for c in RAW:
            assert c not in t, (c, t)


def test_visible_spells_out_controls_c1_del_and_bidi():
    assert visible("a\x1bb") == "a\\x1bb"
    assert visible("\x9b\x7f\u202e") == "\\x9b\\x7f\\u202e"
    assert visible("two\nlines\tok") == "two\nlines\tok"
    assert visible("two\nlines", one_line=True) == "two\\x0alines"
    assert visible("大别山 é") == "大别山 é"


def test_cli_output_never_carries_raw_controls(run):
    code, out, err = run("add", HOSTILE, "--json", actor="\x1b[31mevil")
    assert code == 0, err
    mid = _strict(out)["id"]
    outputs = []
    for args in (["memory", "show", str(mid)], ["memory", "show", str(mid), "--json"],
                 ["search", "note"], ["search", "note", "--json"], ["memory", "pin", str(mid)],
                 ["rule", "add", HOSTILE], ["rules"], ["rules", "--json"]):
        code, out, err = run(*args, actor="\x1b[31mevil")
        assert code == 0, (args, err)
        _no_raw(out, err)
        outputs.append(out)
        if "--json" in args:
            _strict(out)
    assert any("\\x1b[2J" in o for o in outputs)     # shown, not executed
    # An error quoting typed input is escaped too.
    code, out, err = run("memory", "show", "\x1b[2Jx")
    assert code == 2 and err.count("\n") == 1
    _no_raw(out, err)


def test_json_output_is_strict_even_with_a_non_finite_row(run):
    import sqlean as sqlite3

    code, out, _ = run("add", "a plain memory about tea", "--json")
    mid = _strict(out)["id"]
    conn = sqlite3.connect(run.db)
    conn.execute("UPDATE memories SET importance = 9e999, strength = -9e999 WHERE id = ?", (mid,))
    conn.commit()
    conn.close()
    for args in (["memory", "show", str(mid), "--json"], ["search", "tea", "--json"]):
        code, out, err = run(*args)
        assert code == 0, (args, err)
        doc = _strict(out)
        assert "Infinity" not in out and "NaN" not in out
    m = _strict(run("memory", "show", str(mid), "--json")[1])
    assert m["importance"] is None


@pytest.mark.parametrize("args", [
    ["add", "x", "--importance", "1e999"], ["add", "x", "--importance", "nan"],
    ["add", "x", "--importance", "inf"], ["add", "x", "--importance", "-1"],
    ["add", "x", "--importance", str(2**70)],
    ["rule", "add", "r", "--score", "nan"], ["rule", "add", "r", "--score", "1e999"],
    ["rule", "add", "r", "--score", "-1"],
    ["search", "x", "-k", str(2**70)], ["search", "x", "-k", "-1"], ["search", "x", "-k", "nan"],
    ["decay", "forecast", "--days", "nan"], ["decay", "forecast", "--days", "1e999"],
    ["decay", "forecast", "--days", "-1"], ["decay", "forecast", "--days", "30", "--now", "nan"],
    ["decay", "forecast", "--days", "30", "--half-life", "semantic=inf"],
    ["decay", "forecast", "--days", "30", "--limit", str(2**70)],
    ["decay", "curve", "1", "--days", "inf"],
    ["memory", "show", str(2**70)], ["memory", "show", "-1"],
    ["memory", "importance", "1", "nan"], ["memory", "importance", "1", "1e999"],
    ["proposal", "show", str(2**70)], ["rule", "set-score", "1", "inf", "--reason", "x"],
    ["rules", "--limit", "-1"],
])
def test_bad_numbers_are_refused_exit_2_nothing_written(run, args):
    code, _, _ = run("add", "the one memory", "--json")
    assert code == 0
    code, out, err = run(*args)
    assert code == 2, (args, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    code, out, _ = run("search", "x", "--json", "-k", "50", "--tier", "core")
    import sqlean as sqlite3
    conn = sqlite3.connect(run.db)
    try:
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM rules").fetchone()[0] == 0
    finally:
        conn.close()


def test_engine_errors_exit_2(run):
    for args in (["memory", "show", "999"], ["add", ""], ["proposal", "approve", "999"]):
        code, out, err = run(*args)
        assert code == 2, (args, err)
        assert err.count("\n") == 1


def test_number_type_accepts_the_good_ones(run):
    code, out, err = run("add", "x", "--importance", "0.7", "--json")
    assert code == 0, err
    m = _strict(run("memory", "show", str(_strict(out)["id"]), "--json")[1])
    assert math.isclose(m["importance"], 0.7)
