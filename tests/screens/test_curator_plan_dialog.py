"""Issue #25: the Curator's confirmations are the engine's plan. A rule merge's dialog names the
rule it keeps and the apply keeps that id; undo's dialog names what undo then does; a risky merge
shows the dropped condition and each member's word diff in a body that wraps and scrolls at 80×24."""

from __future__ import annotations

from textual.containers import VerticalScroll

from console.app.widgets.table import DataGrid
from screens.curator.confirm import PlanConfirm
from tests.direct_sql import direct
from tests.engine.curator_helpers import add_rule

from .helpers import make_app, settle

KEEP = "Never deploy to production on a Friday afternoon unless the on-call agrees"
OTHER = "Never deploy to production on a Friday afternoon, ever"


async def _open(app, pilot):
    await settle(app, pilot)
    await pilot.press("5")
    await settle(app, pilot)
    return app.pane("curator"), app.query_one("#proposals", DataGrid)


async def test_rule_merge_dialog_names_the_kept_rule_and_undo_says_what_it_does(seeded):
    eng, _ = seeded
    other = add_rule(eng, OTHER, score=8)
    keep = add_rule(eng, KEEP, score=6)  # the higher score survives: `other`
    [pid] = [p.id for p in eng.curator.run(use_model=False).proposals if p.target_kind == "rule"]
    app = make_app(eng)
    async with app.run_test(size=(80, 24)) as pilot:
        pane, table = await _open(app, pilot)
        table.select_key(pid)
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        dlg = app.screen
        assert isinstance(dlg, PlanConfirm)
        assert f"into rule #{other} (kept under its own id)" in dlg.body and "NEW" not in dlg.body
        assert f"#{keep}: retired, absorbed_into → #{other}" in dlg.body
        # risky: the kept text drops the other's condition; the diff and the risk are in the dialog
        diff = str(dlg.query_one("#plan-diff").render())
        assert "drops the condition “unless the on-call agrees”" in diff and f"#{keep}" in diff
        scroll = dlg.query_one("#plan-scroll", VerticalScroll)
        assert scroll.region.right <= 80 and scroll.region.bottom <= 24
        assert scroll.max_scroll_y > 0  # 80×24: more than fits, so it scrolls
        scroll.scroll_end(animate=False)
        await pilot.pause()
        assert scroll.scroll_y == scroll.max_scroll_y
        await pilot.click("#confirm")
        await settle(app, pilot)
        p = eng.curator.get(pid).proposal
        assert (p.status, p.result_id) == ("applied", other)  # the id the dialog named
        assert direct(eng.store).one("SELECT absorbed_into FROM rules WHERE id = ?", (keep,))[0] == other
        # undo: its dialog says which rules come back and that nothing is deleted
        from textual.widgets import Select

        app.query_one("#c-status", Select).value = "applied"
        await settle(app, pilot)
        table.select_key(pid)
        await settle(app, pilot)
        await pilot.press("u")
        await settle(app, pilot)
        dlg = app.screen
        assert isinstance(dlg, PlanConfirm)
        assert f"restore rule #{other} as it was before" in dlg.body
        assert f"restore rule #{keep} as it was before" in dlg.body
        assert "delete no memory or rule: the apply created none" in dlg.body
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.curator.get(pid).proposal.status == "undone"
        assert direct(eng.store).one("SELECT status FROM rules WHERE id = ?", (keep,))[0] == "active"
        assert direct(eng.store).one("SELECT COUNT(*) FROM rules")[0] >= 2  # nothing deleted
        assert app.errors == []


async def test_i_shows_impact_from_a_dry_run_and_the_approve_dialog_lists_it(seeded):
    from tests.engine.curator_helpers import dump

    eng, ids = seeded
    merge = ids["proposals"]["merge"]
    a, b = ids["mem"]["staging"], ids["mem"]["staging2"]
    before = dump(eng)
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        table.select_key(merge)
        await settle(app, pilot)
        await pilot.press("i")
        await settle(app, pilot)
        detail = str(pane.query_one("#proposal-text").render())
        assert "impact (dry run, nothing written):" in detail
        assert f"member #{b}" in detail and "leaves" in detail and "the merged memory" in detail
        assert dump(eng) == before and eng.curator.get(merge).proposal.status == "pending"
        await pilot.press("a")
        await settle(app, pilot)
        assert isinstance(app.screen, PlanConfirm)
        impact = str(app.screen.query_one("#plan-impact").render())
        assert "searches' top k change" in impact and f"member #{a}" in impact
        await pilot.press("escape")
        await settle(app, pilot)
        assert dump(eng) == before  # looking, twice, wrote nothing
        assert app.errors == []
