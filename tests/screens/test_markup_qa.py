"""QA regressions: text an operator types or an agent wrote is never console markup. A rule or
memory holding "[/bold]" and a typed "[/x]" used to crash the whole console (MarkupError)."""

from __future__ import annotations

from textual.content import Content

from console.app.widgets.confirm import PromptModal
from console.app.widgets.table import DataGrid

from .helpers import make_app, settle

TRAP = "Trap rule [/bold] and [red]not red[/red]"


async def test_rule_with_markup_and_a_typed_markup_score_do_not_crash(lifecycle):
    eng, ids, _ = lifecycle
    rid = eng.rules.add(TRAP, score=9.9).id
    app = make_app(eng)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:  # toasts drawn
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        table = app.query_one("#rules-table", DataGrid)
        assert table.select_key(rid)
        await settle(app, pilot)
        row = table.get_row_at(table.cursor_row)
        assert any(getattr(c, "plain", c) == TRAP for c in row)
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, PromptModal)
        await pilot.press("ctrl+a", "ctrl+k", *"[/x]", "enter")  # not a number: a notice
        await settle(app, pilot)
        assert app.is_running and not isinstance(app.screen, PromptModal)
        assert any("[/x]" in n.message for n in app._notifications)
    assert app.return_code in (0, None)
    assert eng.rules.get(rid).score == 9.9


async def test_flow_named_with_markup_shows_its_detail(lifecycle):
    eng, _, _ = lifecycle
    f = eng.flows.add("trap-[/b]", ["[/b] step one", "step [red]two"], triggers=["[/i] trap"])
    eng.flows.record_run(f.id, "fail", note="[/n] note")
    app = make_app(eng)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        table = app.query_one("#flows-table", DataGrid)
        assert table.select_key(f.id)
        await settle(app, pilot)
        assert app.pane("flows").detail.flow.id == f.id
        title = app.query_one("#flow-detail").border_title  # shown as markup
        assert Content.from_markup(str(title)).plain == "flow trap-[/b]"
    assert app.errors == []
