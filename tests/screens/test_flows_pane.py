"""Pane 4 — Flows, driven by keys against a seeded database; asserts on widgets and the DB."""

from __future__ import annotations

from textual.widgets import Input, Select, Sparkline, Static

from console.app.widgets.confirm import ConfirmModal
from console.app.widgets.table import DataGrid

from .helpers import make_app, settle


async def _open(app, pilot):
    await settle(app, pilot)
    await pilot.press("4")
    await settle(app, pilot)
    return app.pane("flows"), app.query_one("#flows-table", DataGrid)


def _cells(table: DataGrid, key) -> list:
    return table.get_row_at(table.get_row_index(str(key)))


async def test_counts_effectiveness_trend_and_flagged(lifecycle):
    eng, ids, _ = lifecycle
    f = ids["flow"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        assert table.row_count == 4
        deploy = _cells(table, f["deploy"])
        assert [deploy[1], deploy[2], deploy[3].plain, deploy[4].plain] == [20, 18, "2", "90"]
        assert deploy[5].plain == "▲ +20"  # recent 10 all passed vs 8 of 10
        assert deploy[6].plain == "█" * 10
        rollback = _cells(table, f["rollback"])
        assert rollback[0].plain.startswith("⚑") and rollback[0].style == "bold red"  # flagged
        assert (rollback[1], rollback[2], rollback[4].plain) == (8, 3, "38")
        assert rollback[6].plain == "█▁█▁▁█▁▁"
        keys = _cells(table, f["keys"])
        assert keys[4].plain == "–" and keys[5].plain == "· new"
        assert "1 flagged" in str(app.query_one("#flows-status", Static).render())
    assert app.errors == []


async def test_detail_steps_runs_sparkline_and_chart(lifecycle):
    eng, ids, _ = lifecycle
    fid = ids["flow"]["rollback"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        table.select_key(fid)
        await settle(app, pilot)
        assert pane.detail.flow.id == fid
        body = str(app.query_one("#flow-steps", Static).render())
        assert " 1. open a ticket" in body and " 3. verify health" in body
        assert "“rollback”" in body and "cache miss" in body
        assert "⚑ flagged" in str(app.query_one("#flow-head", Static).render())
        spark = app.query_one("#flow-spark", Sparkline)
        assert list(spark.data) == [p.value for p in eng.flows.detail(fid).rolling]
        assert spark.data[0] == 1.0 and spark.data[-1] == 0.375  # effectiveness after each run
        assert app.query_one("#flow-detail").border_title == "flow rollback"
        # moving the cursor follows: j goes to the next flow by name
        await pilot.press("j")
        await settle(app, pilot)
        assert pane.detail.flow.name == "rotate-keys"
        assert pane.detail.runs == [] and list(app.query_one("#flow-spark", Sparkline).data) == []
        assert " 3. update secrets" in str(app.query_one("#flow-steps", Static).render())
    assert app.errors == []


async def test_filters_and_disable_is_confirmed(lifecycle):
    eng, ids, _ = lifecycle
    f = ids["flow"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        app.query_one("#ff-show", Select).value = "flagged"
        await settle(app, pilot)
        assert list(pane.flows) == [str(f["rollback"])]
        app.query_one("#ff-show", Select).clear()
        await settle(app, pilot)
        await pilot.press("slash", *"trading")  # domain, name, agent or trigger
        await settle(app, pilot)
        assert list(pane.flows) == [str(f["brief"])]
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is table
        await pilot.press("t")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        body = str(app.screen.query_one("#confirm-body", Static).render())
        assert "Flow pre-market-brief" in body and "status active → disabled" in body
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.flows.get(f["brief"]).status == "disabled"
        assert table.get_row_at(0)[8] == "disabled"
        assert eng.audit.log(target=f"flow:{f['brief']}", action="flow-status")[0].actor == "tester"
        app.query_one("#flows-filter", Input).value = ""
        await settle(app, pilot)
        assert table.row_count == 4
    assert app.errors == []
