"""#27 "why-not text wraps instead of being cut", Recalls pane (8) at 80×24: a failing check's why
is cut to its table column, so the check under the cursor shows its whole why-not, wrapped, in the
panel beside the hits."""

from __future__ import annotations

from console.app.widgets.table import DataGrid
from tests.screens.helpers import make_app, settle
from tests.screens.seed import seeded_engine


async def test_a_failing_checks_whole_why_not_wraps_in_the_panel(tmp_path):
    eng, ids = seeded_engine(tmp_path / "c.db")
    try:
        hits = eng.search("staging database refreshed", k=5).hits
        check = eng.checks.add("staging database refreshed", hits[-1].id, k=1)  # fails: not #1
        assert check.last_ok is False and len(check.last_why) > 40
        app = make_app(eng)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            await pilot.press("8")
            await settle(app, pilot)
            grid = app.query_one("#check-list", DataGrid)
            grid.focus()
            grid.move_cursor(row=0)
            await settle(app, pilot)
            panel = app.query_one("#recall-text")
            shown = " ".join(
                line.text.strip() for line in panel.render_lines(panel.content_region.reset_offset)
            )
            assert f"check #{check.id} · FAIL" in shown
            assert " ".join(check.last_why.split()) in " ".join(shown.split())  # all of it, wrapped
            assert panel.region.right <= 80 and panel.virtual_size.width <= panel.content_region.width
    finally:
        eng.close()
