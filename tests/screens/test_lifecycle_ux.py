"""Issue #16, the lifecycle panes: run decay now from the Decay pane (previewed, confirmed),
marking in the Decay crossings list and the Rules pane, adding a rule, charts that say what they
show."""

from __future__ import annotations

from textual.widgets import Input, Static

from console.app.widgets.confirm import ConfirmModal, DialogError
from console.app.widgets.table import DataGrid
from engine.clock import DAY
from screens.rules.add import AddRuleModal

from .helpers import make_app, settle


def _tiers(eng) -> dict[int, str]:
    return {m.id: m.tier for m in eng.memories.list()}


def _rules(eng) -> dict[int, str]:
    return {r.id: r.status for r in eng.rules.list()}


async def test_run_decay_now_previews_then_writes_only_after_confirming(lifecycle):
    eng, ids, clock = lifecycle
    clock.advance(20 * DAY)  # the two aged episodic memories and three rules are now due
    m = ids["mem"]
    before_tiers, before_rules = _tiers(eng), _rules(eng)
    before_audit = len(eng.audit.log(limit=10_000))
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        app.query_one("#decay-forecast", DataGrid).focus()
        await pilot.press("D")
        await settle(app, pilot)
        modal = app.screen
        assert isinstance(modal, ConfirmModal)
        body = str(modal.query_one("#confirm-body", Static).render())
        assert "2 memories move to the archived tier" in body
        assert f"m{m['hotfix']}" in body and f"m{m['standup']}" in body
        assert "3 rules change score band (0 demoted, 3 retired)" in body
        # the preview wrote nothing; cancelling writes nothing
        assert _tiers(eng) == before_tiers and _rules(eng) == before_rules
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmModal)
        assert _tiers(eng) == before_tiers and _rules(eng) == before_rules
        assert len(eng.audit.log(limit=10_000)) == before_audit
        # again, and confirm: the pass runs, audited, and the pane refreshes
        await pilot.press("D")
        await settle(app, pilot)
        await pilot.click("#confirm")
        await settle(app, pilot)
        after = _tiers(eng)
        assert after[m["hotfix"]] == "archived" and after[m["standup"]] == "archived"
        assert sum(1 for k, s in _rules(eng).items() if s != before_rules[k]) == 3
        assert len(eng.audit.log(limit=10_000)) > before_audit
        view = app.pane("decay").view  # type: ignore[attr-defined]
        assert sum(view.distribution.counts["archived"]) == 3  # redrawn from the new state


async def test_decay_crossings_marked_rows_archive_and_pin_after_one_confirmation(lifecycle):
    eng, ids, _ = lifecycle
    m, r = ids["mem"], ids["rule"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        table = app.query_one("#decay-forecast", DataGrid)
        table.focus()
        table.select_key(f"m{m['hotfix']}")
        await pilot.press("space", "space")  # marks hotfix, then standup (the cursor moves down)
        await pilot.pause()
        pane = app.pane("decay")
        assert pane.marks.keys == [f"m{m['hotfix']}", f"m{m['standup']}"]  # type: ignore[attr-defined]
        assert table.get_row_at(0)[1].plain == f"✓ m{m['hotfix']}"
        assert "2 marked" in str(table.border_title)
        await pilot.press("a")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)
        assert app.screen.title_text == "Archive 2 memories now?"
        assert _tiers(eng)[m["hotfix"]] == "active"  # nothing before the confirmation
        await pilot.click("#confirm")
        await settle(app, pilot)
        tiers = _tiers(eng)
        assert tiers[m["hotfix"]] == "archived" and tiers[m["standup"]] == "archived"
        assert pane.marks.keys == []  # type: ignore[attr-defined]
        # pin: a rule row marked, one confirmation, pinned
        table.select_key(f"r{r['tests']}")
        await pilot.press("space")
        table.select_key(f"r{r['et']}")
        await pilot.press("space")
        await pilot.press("p")
        await settle(app, pilot)
        assert app.screen.title_text == "Pin 2 rows?"
        assert not eng.rules.get(r["tests"]).pinned
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.rules.get(r["tests"]).pinned and eng.rules.get(r["et"]).pinned
    assert app.errors == []


async def test_rules_marked_rows_pin_reinforce_retire_after_one_confirmation(lifecycle):
    eng, ids, _ = lifecycle
    r = ids["rule"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        table = app.query_one("#rules-table", DataGrid)
        pane = app.pane("rules")
        for k in ("tests", "lock"):
            table.select_key(r[k])
            await pilot.press("space")
        await pilot.pause()
        assert pane.marks.keys == [str(r["tests"]), str(r["lock"])]  # type: ignore[attr-defined]
        assert "2 marked" in str(table.border_title)
        row = table.get_row_index(str(r["lock"]))
        assert table.get_row_at(row)[0].plain == f"✓ {r['lock']}"
        app.data_changed()  # a refresh keeps the marks and shows them
        await settle(app, pilot)
        assert table.get_row_at(table.get_row_index(str(r["lock"])))[0].plain == f"✓ {r['lock']}"
        before = {k: eng.rules.get(r[k]).score for k in ("tests", "lock")}
        # reinforce: one confirmation with the count; cancelling writes nothing
        await pilot.press("r")
        await settle(app, pilot)
        assert app.screen.title_text == "Reinforce 2 marked rules?"  # type: ignore[attr-defined]
        await pilot.press("escape")
        await settle(app, pilot)
        assert {k: eng.rules.get(r[k]).score for k in before} == before
        await pilot.press("r")
        await settle(app, pilot)
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert all(eng.rules.get(r[k]).score > before[k] for k in before)
        assert pane.marks.keys == []  # type: ignore[attr-defined]
        # pin, then retire the marked
        for k in ("tests", "lock"):
            table.select_key(r[k])
            await pilot.press("space")
        await pilot.press("p")
        await settle(app, pilot)
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.rules.get(r["tests"]).pinned and eng.rules.get(r["lock"]).pinned
        for k in ("tests", "lock"):
            table.select_key(r[k])
            await pilot.press("space")
        await pilot.press("x")
        await settle(app, pilot)
        assert app.screen.title_text == "Retire 2 marked rules?"  # type: ignore[attr-defined]
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert {eng.rules.get(r[k]).status for k in ("tests", "lock")} == {"retired"}
    assert app.errors == []


async def test_add_rule_dialog_keeps_invalid_score_open_then_adds(lifecycle):
    eng, _, _ = lifecycle
    before = {r.id for r in eng.rules.list()}
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        app.query_one("#rules-table", DataGrid).focus()
        await pilot.press("n")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, AddRuleModal)
        assert app.focused is modal.query_one("#rule-add-text", Input)
        modal.query_one("#rule-add-text", Input).value = "Never force-push to main"
        modal.query_one("#rule-add-agent", Input).value = "agent-7"
        modal.query_one("#rule-add-domain", Input).value = "git"
        for bad, says in (("abc", "not 'abc'"), ("11", "between 0 and 10")):
            modal.query_one("#rule-add-score", Input).value = bad
            await pilot.pause()
            await pilot.press("enter")  # enter in a field submits (layout-independent)
            await pilot.pause()
            assert app.screen is modal  # still open
            assert says in modal.query_one(DialogError).message
            assert {r.id for r in eng.rules.list()} == before
        # no text: stays open too
        modal.query_one("#rule-add-score", Input).value = "7.5"
        text = modal.query_one("#rule-add-text", Input)
        kept, text.value = text.value, " "
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is modal and "text is required" in modal.query_one(DialogError).message
        text.value = kept
        text.focus()
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        assert not isinstance(app.screen, AddRuleModal)
        (new,) = [r for r in eng.rules.list() if r.id not in before]
        assert (new.text, new.score, new.agent, new.domain, new.status) == (
            "Never force-push to main",
            7.5,
            "agent-7",
            "git",
            "active",
        )
        assert str(new.id) in app.pane("rules").rules  # type: ignore[attr-defined]
    assert app.errors == []


async def test_charts_name_their_series_in_the_box_with_distinct_colours(lifecycle):
    from textual_plotext import PlotextPlot

    from console.app.widgets import charts

    eng, ids, _ = lifecycle
    m, r = ids["mem"], ids["rule"]
    app = make_app(eng)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        mem = app.query_one("#chart-memories", PlotextPlot)
        title = str(mem.border_title)
        assert title.startswith("memory strength:")
        assert f"m{m['hotfix']} episodic" in title and f"m{m['standup']} episodic" in title
        assert f"m{m['hotfix']} episodic" in str(mem.border_subtitle)  # the legend, outside the plot
        assert f"r{r['tests']}" in str(app.query_one("#chart-rules", PlotextPlot).border_title)
        dist = app.query_one("#chart-distribution", PlotextPlot)
        assert "core, active, archived" in str(dist.border_title)
        assert "configured rates" in str(app.query_one("#chart-forecast", PlotextPlot).border_title)
    # every series its own colour: the tiers (core and archived were both purple), the series
    # palette, and neither the same as a threshold line
    assert len(set(charts.TIERS.values())) == 3
    assert len(set(charts.SERIES)) == len(charts.SERIES)
    lines = {c for _, c, _ in charts.BAND_LINES}
    assert not lines & set(charts.SERIES)
    assert [label for _, _, label in charts.BAND_LINES] == ["critical 9", "active 5", "dormant 3"]
    assert app.errors == []
