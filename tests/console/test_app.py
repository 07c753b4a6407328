"""The console shell driven the way an operator drives it: keys, palette, help, live refresh,
failures as notices, keyword-only mode."""

from __future__ import annotations

from textual.widgets import Input, TabbedContent

from console.app.widgets.header import StatusHeader
from console.app.widgets.help import HelpScreen
from console.app.widgets.table import DataGrid
from engine import EngineError, open_engine
from engine.identity import actor_text, os_user
from tests.screens.helpers import confirm_yes, make_app, settle
from tests.screens.seed import make_engine, seed

PANES = ["sessions", "search", "rules", "flows", "curator", "decay", "forget", "recalls"]


async def test_header_tabs_and_counts(seeded):
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(160, 40)) as pilot:  # room for the long labels beside who you are
        await settle(app, pilot)
        tabs = app.query_one("#tabs", TabbedContent)
        assert [p.id for p in tabs.query("TabPane")] == PANES
        header = str(app.query_one(StatusHeader).render())
        assert "test.db · tester · admin" in header  # who you are, your role (#27)
        assert "memories 1 core · 10 active · 1 archived" in header and "sessions 4" in header
        assert "proposals 2" in header
        assert header.startswith(" hybrid ")
        assert app.errors == []


async def test_number_keys_switch_panes_unless_typing(seeded):
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        tabs = app.query_one("#tabs", TabbedContent)
        for key, pane in zip("12345678", PANES, strict=True):
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == pane
        await pilot.press("2", "slash")
        await pilot.pause()
        assert app.focused is app.query_one("#query", Input)
        await pilot.press("5", "q", "?")  # text while an input has focus
        await pilot.pause()
        assert tabs.active == "search" and app.is_running
        assert app.query_one("#query", Input).value == "5q?"
        await pilot.press("escape", "1")  # escape leaves the input; keys work again
        await pilot.pause()
        assert tabs.active == "sessions"


async def test_help_lists_every_binding(seeded):
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        entries = app.screen.entries
        keys = {(section, key) for section, key, _ in entries}
        for section, key in (
            ("Global", "q"),
            ("Global", "question_mark"),
            ("Global", "ctrl+p"),
            ("Global", "1"),
            ("Global", "slash"),
            ("Tables", "y"),
            ("Tables", "G"),
            ("2 Search", "p"),
            ("2 Search", "f"),
            ("1 Sessions", "s"),
        ):
            assert (section, key) in keys, (section, key)
        assert all(what for _, _, what in entries)  # every binding says what it does
        assert len(app.screen.query(".help-section")) == len({s for s, _, _ in entries})
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_palette_knows_the_current_pane(seeded):
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"why not")
        await settle(app, pilot)
        from textual.command import CommandList

        options = app.screen.query_one(CommandList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert any("Search: Why not?" in p for p in prompts), prompts
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.press(*"go to 5 curator", "enter")
        await settle(app, pilot)
        assert app.query_one("#tabs", TabbedContent).active == "curator"


async def test_table_vim_keys_and_copy(seeded):
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        t = app.query_one("#session-list", DataGrid)
        t.focus()
        await pilot.press("j", "j")
        assert t.cursor_row == 2
        await pilot.press("G")
        assert t.cursor_row == t.row_count - 1
        await pilot.press("g")
        assert t.cursor_row == 0
        await pilot.press("k")
        assert t.cursor_row == 0
        await pilot.press("y")
        assert t.last_copied == str(t.get_cell_at(t.cursor_coordinate))
        await pilot.press("Y")
        assert "\t" in t.last_copied and "s-brief" not in t.last_copied  # row cells, not the key
        assert "Pre-market brief" in t.last_copied


async def test_live_refresh_keeps_selection(seeded, tmp_path):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        t = app.query_one("#session-list", DataGrid)
        t.focus()
        await pilot.press("j", "j")
        await settle(app, pilot)
        chosen = t.selected_key
        app.poll_db()  # first poll records the version
        await settle(app, pilot)
        # another process (an agent) writes a newer session: it sorts first
        other = open_engine(eng.path, embedder=None, actor="agent-x")
        other.sessions.add(
            "s-new",
            agent="atlas",
            user="dana",
            source="cli",
            title="Fresh session",
            started_at=eng.clock.now(),
        )
        other.add_memory("A brand new memory from an agent", agent="atlas")
        other.close()
        app.poll_db()
        await settle(app, pilot)
        assert t.row_count == 5
        assert t.selected_key == chosen  # same row, though it moved down one
        header = str(app.query_one(StatusHeader).render())
        assert "11 active" in header and "sessions 5" in header
        assert app.errors == []


async def test_a_commit_before_the_first_poll_is_shown(seeded):
    """The version baseline is taken before the panes' first reads: a commit from another process
    landing between the first frame and the first poll is shown by that poll (a baseline taken at
    the poll itself would include it and never refresh)."""
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        other = open_engine(eng.path, embedder=None, actor="agent-x")
        other.add_memory("Written before the console's first poll", agent="atlas")
        other.close()
        app.poll_db()  # the first poll
        await settle(app, pilot)
        assert "11 active" in str(app.query_one(StatusHeader).render())
        assert app.errors == []


async def test_failures_are_notices_not_tracebacks(seeded, monkeypatch):
    eng, _ = seeded
    app = make_app(eng)

    def broken(*a, **k):
        raise EngineError("the database is busy, try again")

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        monkeypatch.setattr(eng, "search", broken)
        await pilot.press("2", "slash", *"deploy", "enter")
        await settle(app, pilot)
        assert app.errors == ["the database is busy, try again"]
        monkeypatch.setattr(eng, "search", lambda *a, **k: 1 / 0)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.is_running
        assert app.errors[-1].startswith("internal error in search.query: ZeroDivisionError")


async def test_keyword_only_without_a_model(tmp_path):
    eng = make_engine(tmp_path / "nomodel.db", embedder=None)
    seed(eng)
    app = make_app(eng)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        assert "keyword-only · no model" in str(app.query_one(StatusHeader).render())
        await pilot.press("2")
        await settle(app, pilot)
        assert "keyword-only" in str(app.query_one("#mode-badge").render())
        await pilot.press("slash", *"fridays deploy", "enter")
        await settle(app, pilot)
        pane = app.pane("search")
        assert pane.result.mode == "keyword"
        assert pane.result.hits[0].content == "Never deploy on Fridays"
        assert "keyword" in str(app.query_one("#search-status").render())
        assert app.errors == []
    eng.close()


async def test_run_console_opens_lazily(tmp_path, monkeypatch):
    """The real entry point opens the engine lazily (model not loading yet) with --actor."""
    from console import app as app_mod

    eng = make_engine(tmp_path / "lazy.db")
    seed(eng)
    eng.close()
    seen = {}

    def fake_run(self):
        seen["state"] = self.engine.embedder.state
        seen["actor"] = self.engine.actor
        self.engine.close()

    monkeypatch.setattr(app_mod.MemConsole, "run", fake_run)
    app_mod.run_console(tmp_path / "lazy.db", actor="operator-1")
    # --actor is a label beside the verified OS user (#27)
    assert seen["state"] == "idle" and seen["actor"] == actor_text(os_user(), "operator-1")


def test_console_start_does_not_import_the_model(tmp_path):
    """In a fresh interpreter: building the console (engine open, panes composed) imports
    neither sentence-transformers nor torch; they load after the first frame."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from console.app import MemConsole\n"
        f"app = MemConsole(db_path={str(tmp_path / 'fresh.db')!r}, actor='x')\n"
        "bad = [m for m in ('sentence_transformers', 'torch') if m in sys.modules]\n"
        "assert app.engine.embedder.state == 'idle', app.engine.embedder.state\n"
        "assert not bad, bad\n"
        "app.engine.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


async def test_keys_remap_from_settings(tmp_path):
    """[keymap] in config.toml remaps a binding by its id (here: pin becomes P)."""
    from console.app.settings import ConsoleSettings

    eng = make_engine(tmp_path / "km.db")
    ids = seed(eng, curator=False)
    app = make_app(eng, settings=ConsoleSettings(keymap={"search.pin": "P"}))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "slash", *"deploy fridays", "enter")
        await settle(app, pilot)
        await pilot.press("p")  # no longer bound
        await settle(app, pilot)
        assert eng.memories.get(ids["mem"]["fridays"]).pinned is False
        await pilot.press("P")
        await settle(app, pilot)
        await confirm_yes(app, pilot)  # pin asks first (#27), whatever key it is bound to
        assert eng.memories.get(ids["mem"]["fridays"]).pinned is True
        await pilot.press("question_mark")
        await pilot.pause()
        assert ("2 Search", "P", "Pin/unpin") in app.screen.entries
    eng.close()


async def test_live_refresh_keeps_scroll_position(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        audit = app.query_one("#audit", DataGrid)
        audit.focus()
        await pilot.press("G", "k", "k")
        await settle(app, pilot)
        key, y = audit.selected_key, audit.scroll_y
        assert y > 0
        app.poll_db()
        await settle(app, pilot)
        other = open_engine(eng.path, embedder=None, actor="agent-x")
        other.add_memory("written by an agent while the operator scrolls", agent="atlas")
        other.close()
        app.poll_db()
        await settle(app, pilot)
        assert audit.row_count == len(eng.audit.log())  # the new audit row arrived
        assert audit.selected_key == key and audit.scroll_y == y


def test_keymap_is_the_consoles_section_of_config_toml(tmp_path):
    """The engine's settings leave [keymap] to the console, which reads it from the same file."""
    import pytest

    from console.app.settings import load_console_settings
    from engine.config import load_settings
    from engine.errors import InvalidInput

    cfg = tmp_path / "config.toml"
    cfg.write_text('[search]\nvector_weight = 0.8\n[keymap]\n"search.pin" = "P"\n')
    assert load_console_settings(cfg).keymap == {"search.pin": "P"}
    assert load_settings(cfg).search.vector_weight == 0.8
    cfg.write_text('[keymap]\n"search.pin" = 1\n')
    with pytest.raises(InvalidInput, match="keymap.search.pin must be a string of keys"):
        load_console_settings(cfg)
