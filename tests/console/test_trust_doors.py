"""Issue #12 "Trust", input at the door: control characters never reach a terminal raw, numbers
are finite and in range, `--json` is strict JSON, config values are checked at load, bad input
exits 2 with one line."""

import json
import math

import pytest

from console.cli import main
from console.shared.text_safety import visible
from engine.errors import InvalidInput

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
    assert visible("\x9b\x7f\u202e") == "\\u009b\\u007f\\u202e"
    assert visible("two\nlines\tok") == "two\nlines\tok"
    assert visible("two\nlines", one_line=True) == "two\\x0alines"
    # JSON written raw with ensure_ascii=False stays valid JSON, same value, through the door.
    doc = json.dumps({"t": "a\x9b\u202e\x7fb"}, ensure_ascii=False)
    assert json.loads(visible(doc)) == {"t": "a\x9b\u202e\x7fb"}
    assert visible("大别山 é") == "大别山 é"


def test_cli_output_never_carries_raw_controls(run):
    # An actor name with a control character is refused, in one safe line (engine/identity_names.py).
    code, out, err = run("add", HOSTILE, "--json", actor="\x1b[31mevil")
    assert code == 2 and "control character" in err and err.count("\n") == 1
    _no_raw(out, err)
    code, out, err = run("add", HOSTILE, "--json", actor="evil")
    assert code == 0, err
    mid = _strict(out)["id"]
    outputs = []
    for args in (
        ["memory", "show", str(mid)],
        ["memory", "show", str(mid), "--json"],
        ["search", "note"],
        ["search", "note", "--json"],
        ["memory", "pin", str(mid)],
        ["rule", "add", HOSTILE],
        ["rules"],
        ["rules", "--json"],
        ["audit"],
        ["audit", "--json"],
    ):
        code, out, err = run(*args, actor="evil")
        assert code == 0, (args, err)
        _no_raw(out, err)
        outputs.append(out)
        if "--json" in args:
            _strict(out)
    assert any("\\x1b[2J" in o for o in outputs)  # shown, not executed
    assert any("evil" in o for o in outputs)  # the actor, as recorded in the audit log
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
        _strict(out)
        assert "Infinity" not in out and "NaN" not in out
    m = _strict(run("memory", "show", str(mid), "--json")[1])
    assert m["importance"] is None


@pytest.mark.parametrize(
    "args",
    [
        ["add", "x", "--importance", "1e999"],
        ["add", "x", "--importance", "nan"],
        ["add", "x", "--importance", "inf"],
        ["add", "x", "--importance", "-1"],
        ["add", "x", "--importance", str(2**70)],
        ["rule", "add", "r", "--score", "nan"],
        ["rule", "add", "r", "--score", "1e999"],
        ["rule", "add", "r", "--score", "-1"],
        ["search", "x", "-k", str(2**70)],
        ["search", "x", "-k", "-1"],
        ["search", "x", "-k", "nan"],
        ["decay", "forecast", "--days", "nan"],
        ["decay", "forecast", "--days", "1e999"],
        ["decay", "forecast", "--days", "-1"],
        ["decay", "forecast", "--days", "30", "--now", "nan"],
        ["decay", "forecast", "--days", "30", "--half-life", "semantic=inf"],
        ["decay", "forecast", "--days", "30", "--limit", str(2**70)],
        ["decay", "curve", "1", "--days", "inf"],
        ["memory", "show", str(2**70)],
        ["memory", "show", "-1"],
        ["memory", "importance", "1", "nan"],
        ["memory", "importance", "1", "1e999"],
        ["proposal", "show", str(2**70)],
        ["rule", "set-score", "1", "inf", "--reason", "x"],
        ["rules", "--limit", "-1"],
    ],
)
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


# -- config at load ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "toml, needle",
    [
        ("[search]\nkeyword_share = 3\n", "search.keyword_share must be between 0 and 1 (got 3)"),
        ("[search]\nkeyword_share = nan\n", "search.keyword_share must be a finite number"),
        ("[search]\nvector_weight = inf\n", "search.vector_weight must be a finite number"),
        ("[search]\ncandidates = 0\n", "search.candidates must be between 1"),
        ("[search]\ncandidates = 2.5\n", "search.candidates must be a whole number"),
        ("[search]\ncandidates = 99999999999999999\n", "search.candidates must be between 1"),
        ('[search]\nfusion = "magic"\n', "search.fusion must be one of convex, rrf"),
        ('[search]\ndedup_threshold = "high"\n', "search.dedup_threshold must be a finite number"),
        ("[decay]\nhalf_life_days = { semantic = -5 }\n", "decay.half_life_days.semantic must be above 0"),
        ("[decay]\nhalf_life_days = { semantic = 0 }\n", "decay.half_life_days.semantic must be above 0"),
        ("[decay]\nhalf_life_days = { weird = 5 }\n", "decay.half_life_days.weird: unknown kind"),
        ("[decay]\narchive_threshold = true\n", "decay.archive_threshold must be a finite number"),
        ("[curator]\nmerge_threshold = 1.5\n", "curator.merge_threshold must be between 0 and 1"),
        ('[curator]\nauto_apply = ["everything"]\n', "curator.auto_apply: unknown proposal kind"),
        ("[curator]\nstale_days = -1\n", "curator.stale_days must be between 0"),
        ("[lifecycle]\nstate_similarity = 2\n", "lifecycle.state_similarity must be between 0 and 1"),
        ("[search]\nno_such = 1\n", "unknown setting search.no_such"),
        ("search = 3\n", "search must be a table"),
        ("[search\n", "not valid TOML"),
    ],
)
def test_config_values_are_checked_at_load_with_one_line_naming_the_key(
    run, tmp_path, monkeypatch, toml, needle
):
    cfg = tmp_path / "config.toml"
    cfg.write_text(toml)
    monkeypatch.setenv("MEMCONSOLE_CONFIG", str(cfg))
    code, out, err = run("search", "x", "--json")
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "config.toml: " in err and needle in err, err


def test_defaults_and_good_values_pass(tmp_path):
    from dataclasses import fields

    from engine import config

    s = config.validate(config.Settings())
    for section in ("decay", "search", "curator", "lifecycle", "mcp"):
        for f in fields(getattr(s, section)):
            v = getattr(getattr(s, section), f.name)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                assert f"{section}.{f.name}" in config._RANGES, f"no range for {section}.{f.name}"
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[search]\nkeyword_share = 0.5\nfusion = "rrf"\n[decay]\n'
        'half_life_days = { semantic = 12 }\n[curator]\nauto_apply = ["archive"]\n'
    )
    s = config.load_settings(cfg)
    assert s.search.keyword_share == 0.5 and s.decay.half_life_days["semantic"] == 12
    assert s.curator.auto_apply == ("archive",)


# -- the console -------------------------------------------------------------------------------------
async def test_console_shows_controls_escaped_in_search_cells_detail_and_header(seeded):
    from textual.widgets import Static

    from console.app.widgets.table import DataGrid
    from tests.screens.helpers import make_app, settle

    eng, _ = seeded
    mid = eng.add_memory("zebracanary " + HOSTILE + " [bold]not bold[/bold]", dedup=False)
    with pytest.raises(InvalidInput, match="control character"):
        eng.actor = "\x1b[31mevil\u202e"  # refused by the engine now ...
    eng.ctx.default_actor = "\x1b[31mevil\u202e"  # ... but the header still escapes one that got in
    app = make_app(eng)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "slash", *"zebracanary", "enter")
        await settle(app, pilot)
        pane = app.pane("search")
        assert [h.id for h in pane.result.hits][:1] == [mid]
        grid = pane.query_one(DataGrid)
        cells = [getattr(c, "plain", str(c)) for c in grid.get_row_at(0)]
        shown = " ".join(cells)
        assert "\\x1b[2J" in shown and "\\x07" in shown
        _no_raw(shown)
        await pilot.pause()
        detail = " ".join(str(w.render()) for w in pane.query(Static))
        assert "\\x1b]0;pwned" in detail and "[bold]not bold[/bold]" in detail
        _no_raw(detail)
        header = str(app.query_one("StatusHeader").render())
        assert "\\x1b[31mevil\\u202e" in header
        _no_raw(header)
        app.notify("bad \x1b[2J news")
        await pilot.pause()
        svg = app.export_screenshot()
        _no_raw(svg)
        assert app.errors == [] if hasattr(app, "errors") else True


def test_click_runner_gets_the_same_safe_output(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from console.cli import cli

    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    monkeypatch.setenv("MEMCONSOLE_CONFIG", str(tmp_path / "none.toml"))
    db = str(tmp_path / "r.db")
    r = CliRunner().invoke(cli, ["--db", db, "--actor", "evil", "add", HOSTILE])
    assert r.exit_code == 0, r.output
    for args in (["search", "note"], ["memory", "show", "1"], ["search", "note", "--json"]):
        r = CliRunner().invoke(cli, ["--db", db, *args])
        assert r.exit_code == 0, r.output
        _no_raw(r.output)
        assert "\\x1b" in r.output or "\\u001b" in r.output


def test_bad_config_reaches_the_console_entry_as_one_line(run, tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text("[search]\nkeyword_share = 3\n")
    monkeypatch.setenv("MEMCONSOLE_CONFIG", str(cfg))
    code, out, err = run()  # no verb: the console
    assert code == 2 and err.count("\n") == 1, err
    assert "search.keyword_share must be between 0 and 1 (got 3)" in err


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    """A demo database with a hostile memory, a session title and non-finite numbers planted."""
    import os

    import sqlean as sqlite3

    d = tmp_path_factory.mktemp("demo")
    db = str(d / "demo.db")
    old = {k: os.environ.get(k) for k in ("MEMCONSOLE_EMBEDDER", "MEMCONSOLE_CONFIG")}
    os.environ.update(MEMCONSOLE_EMBEDDER="hash", MEMCONSOLE_CONFIG=str(d / "none.toml"))
    try:
        assert main(["--db", db, "demo"]) == 0
        assert main(["--db", db, "add", "zebracanary " + HOSTILE]) == 0
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    conn = sqlite3.connect(db)
    conn.execute("UPDATE memories SET importance = 9e999 WHERE id = 3")
    conn.execute("UPDATE memories SET strength = -9e999, anchor_strength = 9e999 WHERE id = 4")
    conn.execute("UPDATE sessions SET title = ? WHERE rowid = 1", (HOSTILE,))
    conn.execute("UPDATE rules SET text = ? WHERE id = 2", (HOSTILE,))
    conn.commit()
    conn.close()
    return db


JSON_VERBS = [
    ["search", "zebracanary"],
    ["search", "deploy"],
    ["explain", "deploy", "3"],
    ["sessions"],
    ["messages", "deploy"],
    ["memory", "show", "3"],
    ["memory", "show", "4"],
    ["rules"],
    ["rule", "show", "2"],
    ["flows"],
    ["boot"],
    ["decay", "forecast", "--days", "30"],
    ["decay", "curve", "3"],
    ["decay", "run", "--dry-run"],
    ["curate", "run", "--dry-run", "--no-model"],
    ["proposals"],
    ["audit"],
    ["forget-requests"],
    ["doctor"],
]


@pytest.mark.parametrize("args", JSON_VERBS, ids=lambda a: " ".join(a))
def test_every_json_output_is_strict_and_escaped(demo_db, capsys, monkeypatch, args):
    monkeypatch.setenv("MEMCONSOLE_EMBEDDER", "hash")
    monkeypatch.setenv("MEMCONSOLE_CONFIG", demo_db + ".none.toml")
    code = main(["--db", demo_db, *args, "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1), (code, err)  # doctor may report findings (exit 1)
    assert "Traceback" not in err and "internal error" not in err, err
    _strict(out)
    _no_raw(out, err)
    code = main(["--db", demo_db, *args])  # and the plain form
    out, err = capsys.readouterr()
    assert code in (0, 1) and "internal error" not in err, err
    _no_raw(out, err)


async def test_every_pane_renders_hostile_stored_text_escaped(seeded):
    """Stored text in every table the panes show: nothing raw on screen, in any pane."""
    from console.app.widgets.table import DataGrid
    from tests.screens.helpers import make_app, settle

    eng, ids = seeded
    bad = " " + HOSTILE + " [bold]x[/bold]"

    def plant(c):
        c.execute("UPDATE sessions SET title = coalesce(title, '') || ?", (bad,))
        c.execute("UPDATE messages SET content = content || ?", (bad,))
        c.execute("UPDATE memories SET content = content || ?", (bad,))
        c.execute("UPDATE rules SET text = text || ?, agent = agent || ?", (bad, "\x1b[7m"))
        c.execute("UPDATE proposals SET survivor_text = coalesce(survivor_text, '') || ?", (bad,))
        c.execute("UPDATE flows SET description = coalesce(description, '') || ?", (bad,))

    eng.store.write(plant)
    eng.ctx.default_actor = "\x1b[31mevil\u202e"  # as an older version could have recorded it
    eng.memories.pin(ids["mem"]["fridays"], reason="why " + HOSTILE)
    app = make_app(eng)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        for key in "1234567":
            await pilot.press(key)
            await settle(app, pilot)
            _no_raw(app.export_screenshot())
            for grid in app.screen.query(DataGrid):
                for i in range(grid.row_count):
                    _no_raw(*(getattr(c, "plain", str(c)) for c in grid.get_row_at(i)))
