"""Pane 8 — Recalls (issue #26): the logged recalls by agent and words, a recall's hits as
returned, `r` replays it and names the merge that changed it, `w` asks why-not for its query,
`p` pins a check and the check list shows it failing after a merge; snapshots at 80×24 and 200×50
(looked at as PNGs)."""

from __future__ import annotations

import pytest

from console.app.widgets.header import StatusHeader
from console.app.widgets.table import DataGrid
from tests.direct_sql import direct

from .helpers import make_app, press_then, settle
from .seed import seeded_engine

SIZES = {"80x24": (80, 24), "200x50": (200, 50)}


def with_recalls(path):
    """The shared seed, three agents' recalls logged, then the staging merge approved."""
    eng, ids = seeded_engine(path)
    eng.search("staging database refreshed", k=5, door="mcp", for_agent="atlas", agent="atlas")
    eng.search("deploy on fridays", k=3, door="hermes", for_agent="coder", record_access=False)
    eng.search("vpn config wiki", k=3, door="cli")
    eng.curator.approve(ids["proposals"]["merge"])
    # a measured latency would differ run to run: the snapshot shows a fixed one
    direct(eng.store).execute("UPDATE recall_log SET latency_ms = 12.5")
    return eng, ids


async def test_browse_replay_and_why_not(tmp_path):
    eng, ids = with_recalls(tmp_path / "r.db")
    staging = ids["mem"]["staging"]
    try:
        app = make_app(eng)
        async with app.run_test(size=(160, 45)) as pilot:
            await settle(app, pilot)  # the first pane's focus settles before the switch
            await pilot.press("8")
            await settle(app, pilot)
            pane = app.pane("recalls")
            grid = app.query_one("#recall-list", DataGrid)
            assert grid.row_count == 3
            # filter by agent and words
            await pilot.press("slash", *"agent:atlas staging", "enter")
            await settle(app, pilot)
            assert grid.row_count == 1
            await pilot.press("escape")
            await settle(app, pilot)
            assert staging in pane.current.hit_ids
            assert app.query_one("#recall-hits", DataGrid).row_count == len(pane.current.hits)
            await pilot.press("r")
            await settle(app, pilot)
            text = str(app.query_one("#recall-text").render())
            assert "merged into #" in text and "merge survivor" in text
            await pilot.press("w")
            await settle(app, pilot)
            await pilot.press(*str(staging), "enter")
            await settle(app, pilot)
            text = str(app.query_one("#recall-text").render())
            assert f"memory #{staging}: not in the top" in text
    finally:
        eng.close()


async def test_pin_a_check_and_see_it_fail(tmp_path):
    eng, ids = seeded_engine(tmp_path / "c.db")
    try:
        eng.search("staging database refreshed", k=5, door="mcp", for_agent="atlas", agent="atlas")
        staging = ids["mem"]["staging"]
        app = make_app(eng)
        async with app.run_test(size=(160, 45)) as pilot:
            await settle(app, pilot)  # the first pane's focus settles before the switch
            await pilot.press("8")
            await settle(app, pilot)
            await pilot.press("p")
            await settle(app, pilot)
            for _ in range(8):
                await pilot.press("backspace")
            await pilot.press(*str(staging), "enter")
            await settle(app, pilot)
            (c,) = eng.checks.list()
            assert c.memory_id == staging and c.status == "pass"
            eng.curator.approve(ids["proposals"]["merge"])
            await pilot.press("c")
            await settle(app, pilot)
            checks = app.query_one("#check-list", DataGrid)
            assert "1 failing" in str(checks.border_title)
            app.data_changed()  # the live refresh: the header counts the failing check too
            await settle(app, pilot)
            assert "1 FAILING" in app.query_one(StatusHeader).plain
    finally:
        eng.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_recalls_pane_at_size(size, snap_compare, tmp_path):
    eng, _ = with_recalls(tmp_path / "snap.db")
    try:
        assert snap_compare(
            make_app(eng), terminal_size=SIZES[size], run_before=press_then("8", "j", "j", "r")
        )
    finally:
        eng.close()
