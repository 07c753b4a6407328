"""Pane 7 with forget cases in every state, at 80×24 and 200×50 (issue #25): the case detail
shows every verification level's line, the cases table the deadlines (one OVERDUE), and a query
preview its matched words highlighted. Each SVG was looked at as a PNG before it was accepted."""

from __future__ import annotations

import pytest

from engine.clock import DAY

from .helpers import make_app, press_then
from .seed import seeded_engine

SIZES = {"80x24": (80, 24), "200x50": (200, 50)}


def _cases(eng) -> dict:
    eng.rules.add("Flag sample sizes under 30", score=9.0, pinned=True)
    gone = eng.add_memory("The locker code is Quokka-4417-Lantern", dedup=False)
    eng.add_memory("Sam holds ES futures; typical size is 2 to 3 contracts", dedup=False)
    eng.add_memory("Sam's largest drawdowns happen on CPI release mornings", dedup=False)
    done = eng.forget.run("memory", [gone], "user asked to erase it")
    late = eng.forget.open("agent", "atlas", "contract ended", deadline=eng.clock.now() - 2 * DAY)
    return {"done": done.request_id, "late": late.id}


@pytest.mark.parametrize("size", list(SIZES))
def test_forget_cases_levels_at_size(size, snap_compare, tmp_path):
    eng, _ = seeded_engine(tmp_path / "snap.db")
    ids = _cases(eng)
    try:
        pick = lambda app: app.query_one("#cases").select_key(ids["done"])  # noqa: E731
        assert snap_compare(make_app(eng), terminal_size=SIZES[size], run_before=press_then("7", after=pick))
    finally:
        eng.close()


@pytest.mark.parametrize("size", ["80x24"])  # the size where the preview was cut (issue #25)
def test_forget_query_preview_at_size(size, snap_compare, tmp_path):
    eng, _ = seeded_engine(tmp_path / "snap.db")
    _cases(eng)

    def query(app):
        from textual.widgets import Select

        app.query_one("#forget-scope", Select).value = "query"

    try:
        keys = press_then("7", "n", after=query)

        async def run_before(pilot):
            await keys(pilot)
            for k in (*"Sam", "tab", *"user asked", "enter"):
                await pilot.press(k)
            from .helpers import settle

            await settle(pilot.app, pilot)

        assert snap_compare(make_app(eng), terminal_size=SIZES[size], run_before=run_before)
    finally:
        eng.close()
