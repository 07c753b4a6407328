"""The console under a role (#27): a viewer's key that would write is refused by the engine, shown
as a notification naming the role, audited, and nothing changes; the header says who and what."""

from __future__ import annotations

import os

import pytest

from console.app.widgets.header import StatusHeader
from engine import open_engine
from engine.embed import HashEmbedder
from tests.screens.helpers import make_app, settle
from tests.screens.seed import seeded_engine

NOBODY = 65534


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to hand the database to another OS user")
async def test_a_viewer_pressing_pin_is_refused_with_a_notification(tmp_path):
    seeded, ids = seeded_engine(tmp_path / "snap.db")
    seeded.close()
    for p in tmp_path.iterdir():
        os.chown(p, NOBODY, NOBODY)  # another user's database: we are a viewer of it
    eng = open_engine(tmp_path / "snap.db", embedder=HashEmbedder())
    app = make_app(eng)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            header = app.query_one(StatusHeader)
            assert header.plain.rstrip().endswith("· viewer")
            await pilot.press("2", "slash", *"deploy fridays", "enter", "escape")
            await settle(app, pilot)
            mid = app.pane("search").result.hits[0].id
            await pilot.press("p")
            await settle(app, pilot)
            assert any("needs the curator role" in e for e in app.errors), app.errors
            assert not eng.memories.get(mid).pinned
            # Refused at the key, before any dialog: the console key is what the audit names.
            assert eng.audit.log(action="refused")[0].target_id == "search.pin"
    finally:
        eng.close()


async def test_at_80_columns_search_keeps_id_tier_and_agent_on_screen(tmp_path):
    eng, _ = seeded_engine(tmp_path / "snap.db")
    app = make_app(eng)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            await pilot.press("2", "slash", *"deploy fridays", "enter", "escape")
            await settle(app, pilot)
            from console.app.widgets.table import DataGrid

            grid = app.pane("search").query_one("#results", DataGrid)
            x, shown = 0, []
            for col in grid.ordered_columns:
                x += col.get_render_width(grid)
                if x <= grid.scrollable_content_region.width:
                    shown.append(col.label.plain)
            assert {"id", "tier", "agent", "content"} <= set(shown), shown
            row = [getattr(c, "plain", str(c)) for c in grid.get_row_at(0)]
            assert row[3:5] == ["active", "atlas"]  # tier, agent of the top hit
            assert app.query_one(StatusHeader).plain.rstrip().endswith("test.db · tester · admin")
    finally:
        eng.close()


async def test_at_80_columns_the_header_abbreviates_who_you_are_never_cuts_it(tmp_path):
    eng, _ = seeded_engine(tmp_path / "snap.db")
    app = make_app(eng, db_label="/srv/memory/teams/platform/production-agents.db")
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            header = app.query_one(StatusHeader)
            header.set_identity("tester (as night-shift-lead)", "curator+forget", True)
            await pilot.pause()
            line = header.plain.rstrip()
            assert len(line) <= 78 and line.endswith("production-agents.db · tester · curator+forget  RO")
            await pilot.resize_terminal(200, 50)
            await settle(app, pilot)
            line = header.plain.rstrip()  # wide: the label and READ-ONLY come back
            assert line.endswith(
                "production-agents.db · tester (as night-shift-lead) · curator+forget  READ-ONLY"
            )
    finally:
        eng.close()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to hand the database to another OS user")
async def test_a_viewer_is_refused_at_the_recalls_pin_key_before_any_prompt(tmp_path):
    """`p` in pane 8 pins a check (engine checks.add_from_recall, curator): a viewer is refused at
    the key, in one line naming the role, audited as that console key; no prompt opens."""
    seeded, _ = seeded_engine(tmp_path / "snap.db")
    seeded.search("deploy on fridays", k=3, door="cli")  # one logged recall to stand on
    seeded.close()
    for p in tmp_path.iterdir():
        os.chown(p, NOBODY, NOBODY)
    eng = open_engine(tmp_path / "snap.db", embedder=HashEmbedder())
    app = make_app(eng)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            await pilot.press("8")
            await settle(app, pilot)
            before = len(app.screen_stack)
            await pilot.press("p")
            await settle(app, pilot)
            assert any("needs the curator role" in e for e in app.errors), app.errors
            assert len(app.screen_stack) == before  # no prompt for a memory id
            assert eng.audit.log(action="refused")[0].target_id == "recalls.pin"
            assert eng.checks.list() == []
    finally:
        eng.close()
