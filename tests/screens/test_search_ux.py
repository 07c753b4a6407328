"""Search pane, operator UX round 2 (issue 16): restore, explain with the pane's search, weak
matches, the final-score formula, marking, create/edit, and 80×24. Keys pressed, database asserted."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from console.app.widgets.confirm import ConfirmModal
from console.app.widgets.table import DataGrid
from engine.errors import InvalidInput

from .helpers import confirm_yes, make_app, row, settle


async def _search(app, pilot, text: str):
    await pilot.press("2", "slash", *text, "enter")
    await settle(app, pilot)
    return app.pane("search")


async def test_restore_an_archived_hit_with_R(seeded):
    eng, ids = seeded
    mid = ids["mem"]["old_deploy"]
    assert eng.memories.get(mid).tier == "archived"
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await _search(app, pilot, "jenkins")
        app.query_one("#f-tier", Select).value = "archived"
        await settle(app, pilot)
        table = app.query_one("#results", DataGrid)
        table.focus()
        assert table.selected_key == str(mid)
        await pilot.press("R")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert "tier archived → active" in app.screen.body
        await pilot.press("escape")  # cancelled: nothing changes
        await settle(app, pilot)
        assert eng.memories.get(mid).tier == "archived"
        await pilot.press("R")
        await pilot.pause()
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.memories.get(mid).tier == "active"
        rows = eng.audit.log(target=f"memory:{mid}", limit=5)
        assert rows[0].action == "restore" and rows[0].reason == "restored from the console"
        assert app.errors == []


async def test_R_on_a_hit_that_is_not_archived_says_so(seeded):
    eng, ids = seeded
    mid = ids["mem"]["fridays"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await _search(app, pilot, "deploy fridays")
        await pilot.press("escape", "R")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmModal)
        assert eng.memories.get(mid).tier == "active"


def test_restore_refuses_active_and_absorbed(seeded):
    eng, ids = seeded
    with pytest.raises(InvalidInput, match="not archived"):
        eng.memories.restore(ids["mem"]["fridays"], reason="x")
    merge = ids["proposals"]["merge"]
    members = eng.curator.get(merge).proposal.members
    eng.curator.approve(merge, reason="same fact")
    absorbed = eng.memories.get(members[0])
    assert absorbed.tier == "archived" and absorbed.absorbed_into is not None
    with pytest.raises(InvalidInput, match="merged into memory"):
        eng.memories.restore(absorbed.id, reason="x")


async def test_why_not_explains_the_search_that_ran(seeded):
    eng, ids = seeded
    calls = []
    real = eng.explain

    def spy(query, memory_id, **kw):
        calls.append((query, memory_id, kw))
        return real(query, memory_id, **kw)

    eng.explain = spy
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        app.query_one("#f-agent", Input).value = "scout"
        pane = await _search(app, pilot, "jenkins")
        assert pane.result.hits
        # edited but not submitted: `w` still explains the search on screen
        app.query_one("#f-agent", Input).value = ""
        app.query_one("#query", Input).value = "something else"
        app.query_one("#results", DataGrid).focus()
        mid = pane.selected_id()
        await pilot.press("w", "enter")
        await settle(app, pilot)
        query, memory_id, kw = calls[-1]
        assert (query, memory_id) == ("jenkins", mid)
        assert kw["mode"] == pane.result.mode and kw["agent"] == "scout"
        assert f"Memory {mid}" in str(app.query_one("#why-result").render())
        assert app.errors == []


async def test_weak_hits_are_marked_in_the_pane(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        pane = await _search(app, pilot, "*")
        table = app.query_one("#results", DataGrid)
        assert pane.result.hits and all(h.weak for h in pane.result.hits)
        assert all(row(table, i)[5].startswith("weak · ") for i in range(table.row_count))
        assert "every hit is weak" in str(app.query_one("#search-status").render())
        app.query_one("#query", Input).value = "deploy fridays"
        app.query_one("#query", Input).focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert not pane.result.hits[0].weak and not row(table, 0)[5].startswith("weak")
        assert app.errors == []


async def test_detail_shows_how_final_is_computed(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        pane = await _search(app, pilot, "deploy fridays")
        hit = pane.result.hits[0]
        b = hit.breakdown
        text = str(app.query_one("#hit-text").render())
        assert "final = fused × (0.75 + 0.10·strength + 0.10·importance + 0.05·recency)" in text
        assert f"{b.rrf:.4f} × (0.75 + 0.10×{b.strength:.3f} + 0.10×{b.importance:.2f}" in text
        assert f"= {b.final:.4f}" in text
        factor = 0.75 + 0.1 * b.strength + 0.1 * b.importance + 0.05 * b.recency
        assert abs((b.rrf + b.context) * factor - b.final) < 1e-3


async def test_space_marks_rows_then_archive_and_pin_act_on_them(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        pane = await _search(app, pilot, "deploy")
        table = app.query_one("#results", DataGrid)
        assert table.row_count >= 3
        table.focus()
        first, second = pane.result.hits[0].id, pane.result.hits[1].id
        await pilot.press("space", "space")  # marks row 1, the cursor moves on; marks row 2
        await pilot.pause()
        assert pane.marked == [first, second]
        assert row(table, 0)[0] == "✓" and row(table, 1)[0] == "✓" and row(table, 2)[0] == ""
        assert "2 marked" in str(table.border_title)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        assert "2 marked memories: tier → archived" in app.screen.body
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.memories.get(first).tier == "archived" and eng.memories.get(second).tier == "archived"
        assert pane.marked == [] and not table.border_title
        # marks on two rows, pin them; then none marked: p toggles the cursor row as before
        table.move_cursor(row=0)
        a, b = pane.result.hits[0].id, pane.result.hits[1].id
        await pilot.press("space", "space", "p")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "Pin 2 marked memories" in app.screen.body
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.memories.get(a).pinned and eng.memories.get(b).pinned
        table.move_cursor(row=2)
        c = pane.selected_id()
        await pilot.press("p")
        await settle(app, pilot)
        await confirm_yes(app, pilot)  # one row: asked too (#27: no stray key acts)
        assert not isinstance(app.screen, ConfirmModal) and eng.memories.get(c).pinned
        # space twice on one row unmarks it; forget sends the marked ids to the Forget pane
        table.move_cursor(row=0)
        await pilot.press("space")
        table.move_cursor(row=0)
        await pilot.press("space")
        assert pane.marked == []
        table.move_cursor(row=0)
        await pilot.press("space", "space", "f")
        await settle(app, pilot)
        assert app.query_one("#forget-value", Input).value == f"{a} {b}"
        assert app.errors == []


async def test_n_adds_a_memory_with_inline_errors(seeded):
    eng, ids = seeded
    from screens.search.forms import MemoryForm

    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("2")
        await settle(app, pilot)
        app.query_one("#results", DataGrid).focus()
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, MemoryForm)
        await pilot.press("enter")  # empty content: refused inline, still open
        await pilot.pause()
        assert app.screen is form and "content is empty" in str(form.query_one("#mf-error").render())
        await pilot.press(*"Backups run at 02:00 UTC")
        form.query_one("#mf-kind", Select).value = "procedural"
        form.query_one("#mf-category", Select).value = "fact"
        form.query_one("#mf-agent", Input).value = "atlas"
        form.query_one("#mf-importance", Input).value = "abc"
        form.query_one("#mf-importance", Input).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is form and "importance must be a number" in str(
            form.query_one("#mf-error").render()
        )
        form.query_one("#mf-importance", Input).value = "0.8"
        await pilot.press("enter")
        await settle(app, pilot)
        assert not isinstance(app.screen, MemoryForm)
        mem = eng.memories.list(agent="atlas", limit=1)[0]
        assert (mem.content, mem.kind, mem.category, mem.importance) == (
            "Backups run at 02:00 UTC",
            "procedural",
            "fact",
            0.8,
        )
        assert eng.audit.log(target=f"memory:{mem.id}", limit=1)[0].action == "add"
        assert app.errors == []


async def test_e_edits_the_text_and_a_pending_merge_on_it_refuses(seeded):
    eng, ids = seeded
    from screens.search.forms import MemoryForm

    merge = ids["proposals"]["merge"]
    members = eng.curator.get(merge).proposal.members
    assert ids["mem"]["staging"] in members
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        pane = await _search(app, pilot, "staging database refreshed")
        table = app.query_one("#results", DataGrid)
        table.focus()
        assert table.select_key(ids["mem"]["staging"])
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, MemoryForm)
        await pilot.press("enter")  # unchanged text: refused inline
        await pilot.pause()
        assert app.screen is form and "unchanged" in str(form.query_one("#mf-error").render())
        form.query_one("#mf-content", Input).value = "The staging database is refreshed every Sunday"
        await pilot.press("enter")
        await settle(app, pilot)
        mem = eng.memories.get(ids["mem"]["staging"])
        assert mem.content == "The staging database is refreshed every Sunday"
        entry = eng.audit.log(target=f"memory:{mem.id}", limit=1)[0]
        assert entry.action == "edit" and entry.reason == "edited from the console"
        assert pane.hits[str(mem.id)].content == mem.content  # the search re-ran
    with pytest.raises(InvalidInput, match="stale"):
        eng.curator.approve(merge, reason="same fact")
    assert eng.curator.get(merge).proposal.status == "pending"


async def test_80x24_keeps_ten_result_rows_and_d_toggles_the_breakdown(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        pane = await _search(app, pilot, "*")
        table = app.query_one("#results", DataGrid)
        assert table.row_count >= 10
        assert table.size.height - 1 >= 10  # the header row, then at least 10 hits on screen
        detail = app.query_one("#hit-detail")
        assert not detail.display and "d: breakdown" in str(app.query_one("#search-status").render())
        await pilot.press("escape", "d")
        await pilot.pause()
        assert detail.display and detail.size.height > 0
        assert f"#{pane.selected_id()}" in str(detail.border_title)
        await pilot.press("d")
        await pilot.pause()
        assert not detail.display and table.size.height - 1 >= 10
        # w brings the why-not bar back for the question, at the results' expense only then
        assert not app.query_one("#why-bar").display
        await pilot.press("w", "enter")
        await settle(app, pilot)
        assert app.query_one("#why-bar").display
        assert f"Memory {pane.result.hits[0].id}" in str(app.query_one("#why-result").render())
        assert app.errors == []


async def test_200x50_shows_the_breakdown_and_d_hides_it(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        await _search(app, pilot, "deploy")
        detail = app.query_one("#hit-detail")
        assert detail.display and app.query_one("#why-bar").display
        await pilot.press("escape", "d")
        await pilot.pause()
        assert not detail.display


async def test_marked_archive_is_one_engine_call_and_says_what_a_stale_mark_came_to(seeded, monkeypatch):
    eng, _ = seeded
    calls: list[list[int]] = []
    real = eng.memories.archive_many
    monkeypatch.setattr(
        eng.memories, "archive_many", lambda ids, reason="": calls.append(ids) or real(ids, reason)
    )
    monkeypatch.setattr(eng.memories, "archive", lambda *a, **k: pytest.fail("one call per memory"))
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        pane = await _search(app, pilot, "deploy")
        table = app.query_one("#results", DataGrid)
        table.focus()
        first, second = pane.result.hits[0].id, pane.result.hits[1].id
        await pilot.press("space", "space", "a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        real([second], reason="archived elsewhere meanwhile")  # the mark on `second` is now stale
        before = len(eng.audit.log(limit=10_000))
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert calls == [[first, second]]
        assert eng.memories.get(first).tier == "archived"
        assert len(eng.audit.log(limit=10_000)) == before + 1  # only `first` changed
        assert any(n.message == "1 memory archived · 1 already archived." for n in app._notifications)
