"""Issue #25: stale is shown before acting in the Curator pane: the list marks stale proposals with
a word, bulk approve says how many are stale and skips them, `S` rejects every stale one with a
reason after a confirmation naming the count."""

from __future__ import annotations

from textual.widgets import Input

from console.app.widgets.confirm import ConfirmModal, PromptModal
from console.app.widgets.table import DataGrid

from .helpers import make_app, row, settle


async def _open(app, pilot):
    await settle(app, pilot)
    await pilot.press("5")
    await settle(app, pilot)
    return app.pane("curator"), app.query_one("#proposals", DataGrid)


def _stale_merge(eng, ids) -> int:
    merge = ids["proposals"]["merge"]
    member = eng.curator.get(merge).proposal.members[0]
    eng.memories.edit(member, "The staging database is refreshed every week from a backup")
    return merge


def _states(table: DataGrid) -> dict[str, str]:
    cols = [c.label.plain for c in table.ordered_columns]
    return {row(table, i)[1]: row(table, i)[cols.index("state")] for i in range(table.row_count)}


async def test_list_marks_stale_and_bulk_approve_skips_them(seeded):
    eng, ids = seeded
    merge, archive = _stale_merge(eng, ids), ids["proposals"]["archive"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        assert _states(table) == {str(merge): "STALE", str(archive): "pending"}
        assert "1 stale" in str(table.border_title)
        table.select_key(merge)
        await settle(app, pilot)
        assert "STALE:" in str(pane.query_one("#proposal-text").render())
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert app.screen.title_text == "Approve 1 proposal: 1 archive"
        assert "1 STALE proposal(s)" in app.screen.body and f"#{merge}" not in app.screen.body.split("(")[0]
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.curator.get(archive).proposal.status == "applied"
        assert eng.curator.get(merge).proposal.status == "pending"  # skipped, not tried
        assert app.errors == []


async def test_S_confirms_the_count_then_rejects_every_stale_one_with_a_reason(seeded):
    eng, ids = seeded
    merge, archive = _stale_merge(eng, ids), ids["proposals"]["archive"]
    app = make_app(eng)
    async with app.run_test(size=(80, 24)) as pilot:
        pane, table = await _open(app, pilot)
        await pilot.press("S")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert app.screen.title_text == "Reject 1 stale proposal?"
        assert f"#{merge}: " in app.screen.body and f"#{archive}" not in app.screen.body
        await pilot.press("escape")  # cancelled: nothing changes
        await settle(app, pilot)
        assert eng.curator.get(merge).proposal.status == "pending"
        await pilot.press("S")
        await pilot.pause()
        await pilot.click("#confirm")
        await pilot.pause()
        assert isinstance(app.screen, PromptModal)
        app.screen.query_one(Input).value = "edited after the scan"
        await pilot.press("enter")
        await settle(app, pilot)
        got = eng.curator.get(merge).proposal
        assert (got.status, got.reason) == ("rejected", "edited after the scan")
        assert eng.curator.get(archive).proposal.status == "pending"
        assert _states(table) == {str(archive): "pending"}
        assert any("Rejected 1 of 1" in n.message for n in app._notifications)
        audited = eng.audit.log(action="proposal-rejected")
        assert [(str(r.target_id), r.reason) for r in audited] == [(str(merge), "edited after the scan")]
        assert app.errors == []


async def test_S_with_nothing_stale_says_so(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(app, pilot)
        await pilot.press("S")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmModal)
        assert any("No stale proposal" in n.message for n in app._notifications)
