"""#26 "pin a check from a search hit": `c` on a Search hit asks first (the dialog names the query,
its filters, the memory and k), then pins "this search keeps memory M in the top k" as a retrieval
check, audited under the operator; `n` pins nothing; a served viewer is refused at the key (the
engine refuses `checks.add` to a viewer as well: tests/engine/test_roles.py POLICY contract)."""

from __future__ import annotations

from console.app.widgets.confirm import ConfirmModal
from console.shared.served import ServedOperator
from tests.screens.helpers import make_app, settle
from tests.screens.seed import seeded_engine


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
            # The same console as `memconsole serve` starts it for a viewer (MEMCONSOLE_ROLE=viewer):
            # `c` is refused at the key, before any dialog, and audited as the console key.
            app.served = ServedOperator("bob", "viewer")
            await pilot.press("c")
            await settle(app, pilot)
            assert not isinstance(app.screen, ConfirmModal)
            assert any("pin check needs the curator role; bob is viewer" in e for e in app.errors), app.errors
            assert len(eng.checks.list()) == 1
            assert eng.audit.log(action="refused")[0].target_id == "search.pin_check"
    finally:
        eng.close()
