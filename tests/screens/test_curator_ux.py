"""Curator triage at scale: space marks rows, A approves the marked (or every shown) row after one
confirmation naming the count and kinds, X rejects them with one reason (an empty one keeps the
dialog open)."""

from __future__ import annotations

from textual.widgets import Input, Select

from console.app.widgets.confirm import ConfirmModal, DialogError, PromptModal
from console.app.widgets.table import DataGrid

from .helpers import make_app, settle


async def _open(app, pilot):
    await settle(app, pilot)
    await pilot.press("5")
    await settle(app, pilot)
    return app.pane("curator"), app.query_one("#proposals", DataGrid)


def _marks(table: DataGrid) -> dict[str, str]:
    return {str(table.get_row_at(i)[1]): str(table.get_row_at(i)[0]) for i in range(table.row_count)}


async def test_space_marks_and_A_approves_only_the_marked(seeded):
    eng, ids = seeded
    merge, archive = ids["proposals"]["merge"], ids["proposals"]["archive"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        table.select_key(merge)
        await settle(app, pilot)
        await pilot.press("space")
        await pilot.pause()
        assert _marks(table) == {str(merge): "✓", str(archive): ""}
        assert "1 marked" in str(table.border_title)
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert app.screen.title_text == "Approve 1 proposal: 1 merge"
        assert f"#{merge}" in app.screen.body and f"#{archive}" not in app.screen.body
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.curator.get(merge).proposal.status == "applied"
        assert eng.curator.get(archive).proposal.status == "pending"
        assert pane.marked == [] and table.row_count == 1 and "marked" not in str(table.border_title)
        assert any("Approved 1 of 1" in n.message for n in app._notifications)
        assert app.errors == []


async def test_A_with_none_marked_takes_every_shown_row_and_X_needs_a_reason(seeded):
    eng, ids = seeded
    merge, archive = ids["proposals"]["merge"], ids["proposals"]["archive"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert app.screen.title_text == "Approve 2 proposals: 1 archive, 1 merge"
        await pilot.press("escape")
        await settle(app, pilot)
        assert eng.curator.list(status="pending") != [] and len(eng.curator.list(status="pending")) == 2
        # the kind filter narrows what "every shown row" means
        app.query_one("#c-kind", Select).value = "archive"
        await settle(app, pilot)
        assert table.row_count == 1
        await pilot.press("X")
        await pilot.pause()
        assert isinstance(app.screen, PromptModal) and "Reject 1 proposal: 1 archive" in app.screen.question
        await pilot.press("enter")  # empty: stays open with an inline error
        await pilot.pause()
        assert isinstance(app.screen, PromptModal)
        assert "reason is required" in app.screen.query_one(DialogError).message
        app.screen.query_one(Input).value = "still needed"
        await pilot.press("enter")
        await settle(app, pilot)
        assert eng.curator.get(archive).proposal.status == "rejected"
        assert eng.curator.get(archive).proposal.reason == "still needed"
        assert eng.curator.get(merge).proposal.status == "pending"
        assert any("Rejected 1 of 1" in n.message for n in app._notifications)
        assert app.errors == []


async def test_list_shows_the_member_text_for_every_kind_escaped(seeded):
    eng, ids = seeded
    merge, archive = ids["proposals"]["merge"], ids["proposals"]["archive"]
    app = make_app(eng)
    async with app.run_test(size=(160, 40)) as pilot:
        pane, table = await _open(app, pilot)
        cols = [c.label.plain for c in table.ordered_columns]
        text_at, agent_at = cols.index("text"), cols.index("agent")
        row = {str(table.get_row_at(i)[1]): table.get_row_at(i) for i in range(table.row_count)}
        assert str(row[str(archive)][text_at]).startswith("Old note: the VPN config lives in the wiki")
        assert str(row[str(merge)][text_at]).startswith("The staging database is refreshed every night")
        assert str(row[str(archive)][agent_at]) == "atlas"
        assert app.errors == []


def test_rows_preview_member_text_and_agents(seeded):
    eng, ids = seeded
    rows = {r.proposal.id: r for r in eng.curator.rows(status="pending")}
    arch = rows[ids["proposals"]["archive"]]
    assert arch.text == "Old note: the VPN config lives in the wiki" and arch.agents == ["atlas"]
    assert [r.proposal.id for r in eng.curator.rows(status="pending", agent="hermes")] == []


async def test_agent_and_kind_filters_narrow_the_bulk_approve(seeded):
    eng, ids = seeded
    for text in (
        "Release notes are written in the shared notebook",
        "Release notes are written in the shared notebook!",
    ):
        eng.add_memory(text, agent="hermes", dedup=False)
    hermes = [p.id for p in eng.curator.run().proposals]
    assert len(hermes) == 1
    app = make_app(eng)
    async with app.run_test(size=(160, 40)) as pilot:
        pane, table = await _open(app, pilot)
        assert table.row_count == 3
        agent = app.query_one("#c-agent", Select)
        assert pane.agents == ["atlas", "hermes"]
        agent.value = "hermes"
        await settle(app, pilot)
        assert [table.get_row_at(i)[1] for i in range(table.row_count)] == hermes
        app.query_one("#c-kind", Select).value = "merge"
        await settle(app, pilot)
        assert table.row_count == 1 and agent.value == "hermes"
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert app.screen.title_text == "Approve 1 proposal: 1 merge"
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.curator.get(hermes[0]).proposal.status == "applied"
        assert len(eng.curator.list(status="pending")) == 2  # the atlas ones untouched
        assert app.errors == []


WEEKLY = "Weekly review week {n}: walk through the open incidents, the on-call handover notes and the deploy calendar"


async def test_risky_merge_flagged_and_left_out_of_A_unless_marked(seeded):
    eng, ids = seeded
    for n in (40, 44, 46):
        eng.add_memory(WEEKLY.format(n=n), agent="atlas", dedup=False)
    risky = next(p.id for p in eng.curator.run().proposals if p.evidence.get("risky"))
    merge, archive = ids["proposals"]["merge"], ids["proposals"]["archive"]
    app = make_app(eng)
    async with app.run_test(size=(160, 40)) as pilot:
        pane, table = await _open(app, pilot)
        table.select_key(risky)
        await settle(app, pilot)
        assert "RISKY: the texts differ only in numbers or dates" in str(
            app.query_one("#proposal-text").render()
        )
        cols = [c.label.plain for c in table.ordered_columns]
        assert str(table.get_row_at(table.cursor_row)[cols.index("evidence")]).startswith("⚠ risky")
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert app.screen.title_text == "Approve 2 proposals: 1 archive, 1 merge"
        assert "1 risky merge(s)" in app.screen.body and f"#{risky}" not in app.screen.body
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.curator.get(risky).proposal.status == "pending"
        assert {eng.curator.get(i).proposal.status for i in (merge, archive)} == {"applied"}
        table.select_key(risky)
        await settle(app, pilot)
        await pilot.press("space", "A")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "Includes 1 RISKY merge" in app.screen.body
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.curator.get(risky).proposal.status == "applied"
        assert app.errors == []


async def test_a_short_terminal_keeps_the_queue_rows_and_its_text_on_screen(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("5")
        await settle(app, pilot)
        pane, table = app.pane("curator"), app.query_one("#proposals", DataGrid)
        assert pane.has_class("-compact")
        assert app.query_one("#curator-run").outer_size.height == 4  # was 8 of the 19 rows
        labels = [c.label.plain for c in table.columns.values()]
        assert labels[:4] == ["✓", "id", "kind", "text"]  # the text starts inside 80 columns
        text_x = sum(c.get_render_width(table) for c in list(table.columns.values())[:3])
        assert text_x < table.size.width - 10
        assert table.size.height >= 7 and table.row_count == 2
