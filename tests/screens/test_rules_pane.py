"""Pane 3 — Rules, driven by keys against a seeded database; asserts on widgets and the DB."""

from __future__ import annotations

from textual.widgets import Select, Static
from textual_plotext import PlotextPlot

from console.app.widgets.confirm import ConfirmModal, PromptModal
from console.app.widgets.table import DataGrid

from .helpers import confirm_yes, make_app, settle


async def _open(app, pilot):
    await settle(app, pilot)
    await pilot.press("3")
    await settle(app, pilot)
    return app.pane("rules"), app.query_one("#rules-table", DataGrid)


async def _select(app, pilot, table: DataGrid, rule_id: int) -> None:
    assert table.select_key(rule_id)
    await settle(app, pilot)


def _text(app, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def test_table_sorted_by_score_with_bands_and_detail(lifecycle):
    eng, ids, _ = lifecycle
    r = ids["rule"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        keys = [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]
        assert keys == [str(r[k]) for k in ("push", "size", "et", "tests", "lock", "jenkins")]
        scores = [eng.rules.get(int(k)).score for k in keys]
        assert scores == sorted(scores, reverse=True)
        # coloured by band: critical red, retired grey
        assert table.get_row_at(0)[1].style == "bold red"
        assert table.get_row_at(5)[2].style == "bright_black"
        assert "6 rules · critical 2 · active 1 · dormant 2 · retired 1" in _text(app, "#rules-status")
        assert app.focused is table
        # the detail follows the cursor: history, violations, last reinforced, source
        await _select(app, pilot, table, r["tests"])
        assert pane.detail.rule.id == r["tests"]
        info = _text(app, "#rule-info")
        assert "Run the test suite before every deploy" in info
        assert "violations 1" in info and "source learning" in info and "last reinforced" in info
        assert "retires in" in info  # dormant and decaying: the projection says when
        assert "deployed without tests" in info  # the violation's history row
        assert len(pane.detail.history) >= 3
        assert app.query_one("#rule-chart", PlotextPlot).plt is not None
        assert f"rule #{r['tests']}" in app.query_one("#rule-detail").border_title
    assert app.errors == []


async def test_retire_is_confirmed_and_changes_the_database(lifecycle):
    eng, ids, _ = lifecycle
    rid = ids["rule"]["et"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        await _select(app, pilot, table, rid)
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        body = str(app.screen.query_one("#confirm-body", Static).render())
        assert f"Rule #{rid}: status active → retired (score stays 5.5)" in body
        assert "stops loading at boot for agent hermes" in body
        await pilot.press("escape")  # cancel: nothing changes
        await settle(app, pilot)
        assert eng.rules.get(rid).status == "active"
        await pilot.press("x")
        await pilot.pause()
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.rules.get(rid).status == "retired"
        # the table refreshed and kept the cursor on the same rule
        assert table.selected_key == str(rid)
        assert table.get_row_at(table.cursor_row)[2].plain == "retired"
        entry = eng.audit.log(target=f"rule:{rid}", action="rule-retire")[0]
        assert entry.actor == "tester"  # the console's actor is recorded
        # revive brings it back at score >= 5
        await pilot.press("v")
        await settle(app, pilot)
        await confirm_yes(app, pilot)  # v asks first (#27: no stray key acts)
        assert eng.rules.get(rid).status == "active" and eng.rules.get(rid).score >= 5
    assert app.errors == []


async def test_set_score_asks_value_reason_and_confirmation(lifecycle):
    eng, ids, _ = lifecycle
    rid = ids["rule"]["lock"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        await _select(app, pilot, table, rid)
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, PromptModal)
        await pilot.press("ctrl+a", "ctrl+k", "9", ".", "5", "enter")
        await pilot.pause()
        assert isinstance(app.screen, PromptModal)  # the reason is required
        await pilot.press(*"lockfiles saved us twice", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        body = str(app.screen.query_one("#confirm-body", Static).render())
        assert f"Rule #{rid}: score 3 → 9.5; status dormant → critical." in body
        assert "Reason: lockfiles saved us twice" in body
        await pilot.click("#confirm")
        await settle(app, pilot)
        rule = eng.rules.get(rid)
        assert (rule.score, rule.status) == (9.5, "critical")
        assert eng.rules.history(rid)[-1].reason == "lockfiles saved us twice"
        assert table.get_row_at(0)[1].plain.strip() == "10.0"  # still sorted: 10, 9.5, 9.5, ...
        assert str(rid) in [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(3)]
    assert app.errors == []


async def test_pin_and_reinforce(lifecycle):
    eng, ids, _ = lifecycle
    rid = ids["rule"]["tests"]
    before = eng.rules.get(rid)
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        await _select(app, pilot, table, rid)
        await pilot.press("r")
        await settle(app, pilot)
        await confirm_yes(app, pilot)  # r and p ask first (#27: no stray key acts)
        after = eng.rules.get(rid)
        assert after.score == before.score + eng.settings.decay.rule_reinforce_boost
        assert after.last_reinforced_at == eng.clock.now()
        await pilot.press("p")
        await settle(app, pilot)
        await confirm_yes(app, pilot)
        assert eng.rules.get(rid).pinned
        assert table.get_row_at(table.cursor_row)[6] == "●"
        await pilot.press("p")
        await settle(app, pilot)
        await confirm_yes(app, pilot)
        assert not eng.rules.get(rid).pinned
    assert app.errors == []


async def test_filters_and_boot_preview(lifecycle):
    eng, ids, _ = lifecycle
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        app.query_one("#rf-status", Select).value = "dormant"
        await settle(app, pilot)
        assert sorted(pane.rules) == sorted(str(ids["rule"][k]) for k in ("tests", "lock"))
        app.query_one("#rf-status", Select).clear()
        app.query_one("#rf-agent", Select).value = "hermes"
        await settle(app, pilot)
        assert {r.agent for r in pane.rules.values()} == {"hermes"}
        await pilot.press("b")
        await settle(app, pilot)
        assert app.query_one("#boot-panel").display and not app.query_one("#rule-detail").display
        text = str(app.query_one("#boot-text", Static).render())
        assert text.startswith('<memory-context agent="hermes"')
        assert "Cap position size at 2% of the book" in text  # hermes' critical rule
        assert "Never force-push to main" not in text  # atlas' rule
        assert "agent hermes" in app.query_one("#boot-panel").border_title
        # the text filter narrows by full text
        app.query_one("#rf-agent", Select).clear()
        await pilot.press("slash", *"lockfiles")
        await settle(app, pilot)
        assert list(pane.rules) == [str(ids["rule"]["lock"])]
        # the boot preview follows the agent filter
        assert pane.boot.agent is None
    assert app.errors == []


async def test_live_refresh_keeps_the_selection(lifecycle):
    from engine import open_engine

    eng, ids, clock = lifecycle
    rid = ids["rule"]["tests"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        await _select(app, pilot, table, rid)
        app.poll_db()  # the baseline data_version
        await settle(app, pilot)
        agent = open_engine(eng.path, embedder=None, clock=clock, actor="agent-7", load="lazy")
        try:
            agent.rules.reinforce(rid, reason="the agent followed it")
            agent.rules.reinforce(rid, reason="and again")
        finally:
            agent.close()
        app.poll_db()
        await settle(app, pilot)
        assert table.selected_key == str(rid)  # the rule moved up; the cursor followed it
        assert table.get_row_at(table.cursor_row)[1].plain.strip() == "5.5"
        assert pane.detail.history[-1].actor == "agent-7"
        assert "and again" in _text(app, "#rule-info")
    assert app.errors == []
