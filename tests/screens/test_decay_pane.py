"""Pane 6 — Decay: charts from read-only forecasts, what-if rates that write nothing, the preview
clock, and redraws when another process changes the database."""

from __future__ import annotations

from textual.widgets import Input, Static

from console.app.widgets.table import DataGrid
from engine import open_engine
from engine.clock import DAY

from .helpers import make_app, settle


async def _open(app, pilot):
    await settle(app, pilot)
    await pilot.press("6")
    await settle(app, pilot)
    return app.pane("decay"), app.query_one("#decay-forecast", DataGrid)


def _keys(table: DataGrid) -> list[str]:
    return [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]


def _state(eng) -> list:
    """Everything decay could change: tiers, strengths, scores, statuses, the audit trail."""
    mems = [(m.id, m.tier, m.strength, m.last_reinforced_at) for m in eng.memories.list()]
    rules = [(r.id, r.score, r.status) for r in eng.rules.list()]
    return [mems, rules, len(eng.audit.log(limit=10_000))]


async def test_charts_and_forecast_of_what_crosses(lifecycle):
    eng, ids, _ = lifecycle
    m, r = ids["mem"], ids["rule"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        v = pane.view
        # within 30 days: the two aged episodic memories, and three rules losing their band
        assert _keys(table) == [
            f"m{m['hotfix']}",
            f"m{m['standup']}",
            f"r{r['tests']}",
            f"r{r['et']}",
            f"r{r['lock']}",
        ]
        assert table.get_row_at(0)[2] == "episodic" and table.get_row_at(0)[4] == "0.37"
        # nothing chosen yet: the next crossers are charted
        assert v.chosen == [f"m{m['hotfix']}", f"m{m['standup']}", f"r{r['tests']}", f"r{r['et']}"]
        assert [c.target_id for c, _ in v.memory_curves] == [m["hotfix"], m["standup"]]
        assert [c.target_id for c in v.rule_curves] == [r["tests"], r["et"]]
        assert v.timeline.total == 2 and v.timeline.cumulative[-1] == 2
        assert sum(v.distribution.counts["archived"]) == 1  # the failed deploy: archived by a pass
        status = str(app.query_one("#decay-status", Static).render())
        assert "2 memories archive and 3 rules change status within 30 d" in status
        assert "2026-01-01 (now)" in str(app.query_one("#decay-clock", Static).render())
        # c on a row adds its curve; again removes it
        table.select_key(f"r{r['lock']}")
        await pilot.press("c")
        await settle(app, pilot)
        assert f"r{r['lock']}" in pane.view.chosen and len(pane.view.rule_curves) == 3
        assert app.query_one("#decay-chosen", Input).value.endswith(f"r{r['lock']}")
        assert table.get_row_at(table.cursor_row)[0] == "●"
        await pilot.press("c")
        await settle(app, pilot)
        assert f"r{r['lock']}" not in pane.view.chosen
    assert app.errors == []


async def test_what_if_rate_draws_a_curve_and_writes_nothing(lifecycle):
    eng, ids, _ = lifecycle
    before = _state(eng)
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        real_total = pane.view.timeline.total
        pane.debounce = 0  # redraw on every change (no timer to wait for)
        field = app.query_one("#hl-semantic", Input)
        field.value = "3"  # semantic 30 d -> 3 d
        await settle(app, pilot)
        v = pane.view
        assert v.rates == {"semantic": 3.0}
        assert v.what_if_timeline.total > real_total  # faster decay: more cross
        assert v.forecast.memories_total == v.what_if_timeline.total
        assert "what-if semantic 30→3 d (nothing is written)" in str(
            app.query_one("#decay-status", Static).render()
        )
        # choose a semantic memory: its real curve and its what-if curve
        await pilot.press("slash", *f"m{ids['mem']['ports']}", "enter")
        await settle(app, pilot)
        ((real, what_if),) = pane.view.memory_curves
        assert real.target_id == ids["mem"]["ports"] and what_if is not None
        assert what_if.points[-1].value < real.points[-1].value
        await pilot.press("escape", "w")  # clear the what-if
        await settle(app, pilot)
        assert pane.view.rates is None and pane.view.memory_curves[0][1] is None
    assert _state(eng) == before
    assert app.errors == []


async def test_preview_clock_shows_the_future(lifecycle):
    eng, ids, _ = lifecycle
    before = _state(eng)
    now = eng.clock.now()
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        assert pane.view.distribution.below_threshold["active"] == 0
        await pilot.press("right_square_bracket", "right_square_bracket")
        await settle(app, pilot)
        v = pane.view
        assert v.now == now + 14 * DAY and v.offset_days == 14
        assert "2026-01-15 +14 d" in str(app.query_one("#decay-clock", Static).render())
        assert v.distribution.below_threshold["active"] == 2  # both episodic memories crossed
        assert all(c.points[0].at == v.now for c, _ in v.memory_curves)
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert pane.view.offset_days == 7
        await pilot.press("n")
        await settle(app, pilot)
        assert pane.view.now == now
    assert _state(eng) == before
    assert app.errors == []


async def test_charts_redraw_when_another_process_writes(lifecycle, tmp_path):
    eng, ids, clock = lifecycle
    hotfix = ids["mem"]["hotfix"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        assert f"m{hotfix}" in _keys(table)
        app.poll_db()  # the baseline data_version
        await settle(app, pilot)
        agent = open_engine(eng.path, embedder=None, clock=clock, actor="agent-7", load="lazy")
        try:
            agent.memories.pin(hotfix, reason="the agent keeps it")
        finally:
            agent.close()
        app.poll_db()
        await settle(app, pilot)
        assert f"m{hotfix}" not in _keys(table)  # pinned: it no longer decays
        assert pane.view.timeline.total == 1
    assert app.errors == []


async def test_panes_3_4_6_on_an_empty_database(tmp_path):
    from .seed import make_engine

    eng = make_engine(tmp_path / "empty.db")
    try:
        app = make_app(eng)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            for key in "346":
                await pilot.press(key)
                await settle(app, pilot)
            pane = app.pane("decay")
            assert pane.view.chosen == [] and pane.view.timeline.total == 0
            assert app.query_one("#decay-forecast", DataGrid).row_count == 0
            assert app.pane("rules").rules == {} and app.pane("flows").flows == {}
            assert "0 rules" in str(app.query_one("#rules-status", Static).render())
            await pilot.press("3", "x")  # an action with nothing selected
            await pilot.pause()
            assert app.screen is app.screen_stack[0]  # no confirmation: nothing to retire
        assert app.errors == []
    finally:
        eng.close()


async def test_a_short_terminal_draws_one_chart_at_a_time_and_keeps_the_crossings(lifecycle):
    eng, _, _ = lifecycle
    charts = ["#chart-memories", "#chart-rules", "#chart-distribution", "#chart-forecast"]
    app = make_app(eng)
    async with app.run_test(size=(80, 24)) as pilot:
        pane, table = await _open(app, pilot)
        shown = lambda: [c for c in charts if app.query_one(c).display and app.query_one(c).parent.display]  # noqa: E731
        assert pane.has_class("-compact") and shown() == ["#chart-memories"]
        assert app.query_one("#chart-memories").outer_size.height >= 8  # not squeezed to a line or two
        assert table.size.height >= 7 and table.row_count == 5  # every crossing on screen
        assert "t: next chart (1/4)" in str(app.query_one("#decay-chart-key", Static).render())
        table.focus()
        for want in charts[1:] + charts[:1]:  # t cycles through the four and back
            await pilot.press("t")
            await pilot.pause()
            assert shown() == [want]
        assert app.query_one("#hl-procedural").region.right <= 80  # the half-lives wrap, not cut
    app = make_app(eng)
    async with app.run_test(size=(200, 50)) as pilot:
        pane, table = await _open(app, pilot)
        assert not pane.has_class("-compact")
        assert all(app.query_one(c).display and app.query_one(c).size.height >= 12 for c in charts)
        assert not app.query_one("#decay-chart-key").display
        table.focus()
        await pilot.press("t")
        await pilot.pause()
        assert any("All four charts are shown" in n.message for n in app._notifications)
