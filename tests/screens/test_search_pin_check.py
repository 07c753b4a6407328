"""#26 "pin a check from a search hit": `c` on a Search hit asks first (the dialog names the query,
its filters, the memory and k), then pins "this search keeps memory M in the top k" as a retrieval
check, audited under the operator; `n` pins nothing; a viewer is refused at the key."""

from __future__ import annotations

import os

import pytest

from console.app.widgets.confirm import ConfirmModal
from engine import open_engine
from engine.embed import HashEmbedder
from tests.screens.helpers import make_app, settle
from tests.screens.seed import seeded_engine

NOBODY = 65534


async def _search(app, pilot, query: str) -> None:
    await pilot.press("2", "slash", *query, "enter", "escape")
    await settle(app, pilot)


async def test_c_on_a_hit_pins_a_check_with_the_searchs_filters_after_asking(tmp_path):
    eng, _ = seeded_engine(tmp_path / "snap.db")
    app = make_app(eng)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            pane = app.pane("search")
            await pilot.press("2")
            await settle(app, pilot)
            pane.query_one("#f-agent").value = "atlas"
            await _search(app, pilot, "deploy fridays")
            assert len(pane.result.hits) >= 2
            await pilot.press("down")  # the second hit
            await settle(app, pilot)
            mid = pane.result.hits[1].id
            await pilot.press("c")
            await settle(app, pilot)
            modal = app.screen
            assert isinstance(modal, ConfirmModal)
            assert modal.title_text == f"Pin a retrieval check on memory #{mid}?"
            assert "“deploy fridays” (agent:atlas)" in modal.body and "top 10 (it is #2 now)" in modal.body
            await pilot.press("n")  # cancelled: nothing pinned
            await settle(app, pilot)
            assert eng.checks.list() == []
            await pilot.press("c")
            await settle(app, pilot)
            app.screen._armed_at = 0.0  # the dialog has been read: y confirms
            await pilot.press("y")
            await settle(app, pilot)
            [check] = eng.checks.list()
            assert (check.query, check.memory_id, check.k, check.last_ok) == ("deploy fridays", mid, 10, True)
            assert check.filters.get("agent") == "atlas"
            row = eng.audit.log(action="check-add")[0]
            assert row.target_id == str(check.id) and row.actor == eng.identity.actor
            assert any(f"Check #{check.id} pinned" in n.message for n in app.notices.newest_first()[:3])
    finally:
        eng.close()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to hand the database to another OS user")
async def test_a_viewer_pressing_c_is_refused_at_the_key(tmp_path):
    seeded, _ = seeded_engine(tmp_path / "snap.db")
    seeded.close()
    for p in tmp_path.iterdir():
        os.chown(p, NOBODY, NOBODY)  # another user's database: we are a viewer of it
    eng = open_engine(tmp_path / "snap.db", embedder=HashEmbedder())
    app = make_app(eng)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            await _search(app, pilot, "deploy fridays")
            await pilot.press("c")
            await settle(app, pilot)
            assert not isinstance(app.screen, ConfirmModal)  # refused before any dialog
            assert any("pin check needs the curator role" in e for e in app.errors), app.errors
            assert eng.checks.list() == []
    finally:
        eng.close()
