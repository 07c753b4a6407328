"""Pane 2 — Search, driven by keys against a seeded database; asserts on widgets and the DB."""

from __future__ import annotations

from textual.widgets import Input, Select, TabbedContent

from console.app.widgets.confirm import ConfirmModal, PromptModal
from console.app.widgets.table import DataGrid

from .helpers import confirm_yes, make_app, row, settle


async def _search(app, pilot, text: str):
    await pilot.press("2", "slash", *text, "enter")
    await settle(app, pilot)
    return app.pane("search")


async def test_search_shows_hits_breakdown_and_no_access_recorded(seeded):
    eng, ids = seeded
    before = eng.memories.get(ids["mem"]["fridays"]).access_count
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        pane = await _search(app, pilot, "deploy fridays")
        table = app.query_one("#results", DataGrid)
        assert table.row_count >= 1
        assert row(table, 0)[5] == "Never deploy on Fridays"
        assert table.selected_key == str(ids["mem"]["fridays"])
        bars = str(app.query_one("#breakdown").render())
        for label in ("keyword", "vector", "fused", "strength", "importance", "recency", "final"):
            assert label in bars
        assert "█" in bars
        assert "hybrid" in str(app.query_one("#search-status").render())
        # moving the cursor redraws the breakdown for that hit
        if table.row_count > 1:
            await pilot.press("escape", "j")
            await pilot.pause()
            assert f"#{table.selected_key}" in str(app.query_one("#hit-detail").border_title)
        assert pane.result.hits[0].breakdown.bm25_rank == 1
    assert eng.memories.get(ids["mem"]["fridays"]).access_count == before  # record_access=False
    assert app.errors == []


async def test_filters_apply_and_elsewhere_hints(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        pane = await _search(app, pilot, "jenkins")
        # the archived Jenkins memory is not in core+active; the hint says where it is
        assert all(h.tier != "archived" for h in pane.result.hits)
        app.query_one("#f-tier", Select).value = "archived"
        await settle(app, pilot)
        assert [h.id for h in pane.result.hits] == [ids["mem"]["old_deploy"]]
        app.query_one("#f-tier", Select).value = "default"
        app.query_one("#f-kind", Select).value = "procedural"
        await settle(app, pilot)
        assert pane.result.hits == [] or all(h.kind == "procedural" for h in pane.result.hits)
        app.query_one("#f-kind", Select).value = Select.NULL
        app.query_one("#f-agent", Input).value = "scout"
        app.query_one("#query", Input).focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert pane.result.hits and all(h.agent == "scout" for h in pane.result.hits)
        # thin results: the hint says where else "jenkins" is known
        hint = str(app.query_one("#elsewhere").render())
        assert "elsewhere:" in hint and "without the filters" in hint
        assert "message(s) in sessions s-deploy" in hint
        assert app.errors == []


async def test_why_not_explains_in_plain_words(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await _search(app, pilot, "deploy fridays")
        app.query_one("#whynot", Input).focus()
        await pilot.press(*str(ids["mem"]["old_deploy"]), "enter")
        await settle(app, pilot)
        text = str(app.query_one("#why-result").render())
        assert f"Memory {ids['mem']['old_deploy']} is not in the top" in text
        assert "archived" in text
        await pilot.press("ctrl+a", "ctrl+k", *"999", "enter")
        await settle(app, pilot)
        assert "no memory with id 999" in str(app.query_one("#why-result").render()).lower()
        assert app.errors == []


async def test_pin_importance_archive_write_the_database(seeded):
    eng, ids = seeded
    mid = ids["mem"]["fridays"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await _search(app, pilot, "deploy fridays")
        await pilot.press("escape")
        assert app.query_one("#results", DataGrid).selected_key == str(mid)
        await pilot.press("p")
        await settle(app, pilot)
        await confirm_yes(app, pilot)  # p asks first (#27: no stray key acts)
        assert eng.memories.get(mid).pinned is True
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, PromptModal)
        await pilot.press("ctrl+a", "ctrl+k", *"0.35", "enter")
        await settle(app, pilot)
        assert eng.memories.get(mid).importance == 0.35
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert "tier active → archived" in app.screen.body
        await pilot.press("escape")  # cancelled: nothing changes
        await settle(app, pilot)
        assert eng.memories.get(mid).tier == "active"
        await pilot.press("a")
        await pilot.pause()
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.memories.get(mid).tier == "archived"
        # the pane refreshed: the archived memory left the default results
        assert str(mid) not in [str(h.id) for h in app.pane("search").result.hits]
        actions = [e.action for e in eng.audit.log(target=f"memory:{mid}")]
        assert {"pin", "set-importance", "archive"} <= set(actions)
        assert all(e.actor == "tester" for e in eng.audit.log(target=f"memory:{mid}"))
        assert app.errors == []


async def test_forget_opens_pane_7_and_source_opens_the_message(seeded):
    eng, ids = seeded
    mid = ids["mem"]["ticket"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await _search(app, pilot, "rollbacks ticket")
        await pilot.press("escape")
        assert app.query_one("#results", DataGrid).selected_key == str(mid)
        await pilot.press("o")
        await settle(app, pilot)
        assert app.query_one("#tabs", TabbedContent).active == "sessions"
        assert app.query_one("#transcript", DataGrid).selected_key == str(ids["deploy_msgs"][3])
        await pilot.press("2")
        await pilot.pause()
        await pilot.press("f")
        await settle(app, pilot)
        assert app.query_one("#tabs", TabbedContent).active == "forget"
