"""Pane 5 — Curator: approving applies the merge (in the database), reject needs a reason,
undo restores, runs (dry and real) report back."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from console.app.widgets.confirm import ConfirmModal, PromptModal
from console.app.widgets.table import DataGrid
from engine import NotFound
from screens.curator.pane import word_diff

from .helpers import confirm_yes, make_app, settle


def test_word_diff_marks_removed_and_added_words():
    t = word_diff("refreshed every night from a production snapshot", "refreshed every night from production")
    struck = [t.plain[s.start : s.end].strip() for s in t.spans if "strike" in str(s.style)]
    assert struck == ["a", "snapshot"]


async def _open(app, pilot):
    await settle(app, pilot)
    await pilot.press("5")
    await settle(app, pilot)
    return app.pane("curator"), app.query_one("#proposals", DataGrid)


async def test_approve_merge_applies_it(seeded):
    eng, ids = seeded
    merge, archive = ids["proposals"]["merge"], ids["proposals"]["archive"]
    a, b = ids["mem"]["staging"], ids["mem"]["staging2"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        assert table.row_count == 2 and app.focused is table
        table.select_key(merge)
        await settle(app, pilot)
        detail = str(app.query_one("#proposal-text").render())
        assert "proposed survivor" in detail and f"#{a} ★" in detail and f"#{b}" in detail
        assert "similarity (cosine)" in detail and "0.916" in detail
        await pilot.press("a")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)
        assert f"Merge memories #{a}, #{b}: a NEW memory is made" in app.screen.body
        assert f"metadata of #{a} (the survivor)" in app.screen.body
        await pilot.click("#confirm")
        await settle(app, pilot)
        p = eng.curator.list(status="applied")[0]
        assert p.id == merge and p.decided_by == "tester"
        merged = eng.memories.get(p.result_id)
        assert merged.content == "The staging database is refreshed every night from production"
        assert eng.memories.get(a).absorbed_into == p.result_id and eng.memories.get(a).tier == "archived"
        assert eng.memories.get(b).absorbed_into == p.result_id
        assert table.row_count == 1 and table.selected_key == str(archive)  # queue refreshed
        status = str(app.query_one("#status").render())
        assert "proposals 1" in status or "prop 1" in status  # long or short labels, by width
        assert app.errors == []


async def test_edit_then_approve_uses_the_operator_text(seeded):
    eng, ids = seeded
    merge = ids["proposals"]["merge"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        table.select_key(merge)
        await settle(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, PromptModal)
        app.screen.query_one(Input).value = "Staging is refreshed nightly from production"
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)
        assert "Staging is refreshed nightly from production" in app.screen.body
        await pilot.click("#confirm")
        await settle(app, pilot)
        p = eng.curator.get(merge).proposal
        assert p.status == "applied"
        assert eng.memories.get(p.result_id).content == "Staging is refreshed nightly from production"


async def test_reject_with_reason_and_undo_applied(seeded):
    eng, ids = seeded
    merge, archive = ids["proposals"]["merge"], ids["proposals"]["archive"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        table.select_key(archive)
        await settle(app, pilot)
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, PromptModal)
        app.screen.query_one(Input).value = "still needed for onboarding"
        await pilot.press("enter")
        await settle(app, pilot)
        p = eng.curator.get(archive).proposal
        assert p.status == "rejected" and p.reason == "still needed for onboarding"
        assert eng.memories.get(ids["mem"]["vpn"]).tier == "active"
        # approve the merge, then undo it from the "applied" view
        table.select_key(merge)
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        await pilot.click("#confirm")
        await settle(app, pilot)
        result = eng.curator.get(merge).proposal.result_id
        app.query_one("#c-status", Select).value = "applied"
        await settle(app, pilot)
        assert table.selected_key == str(merge)
        await pilot.press("u")
        await settle(app, pilot)
        assert (
            isinstance(app.screen, ConfirmModal)
            and f"delete memory #{result}, which the apply created" in app.screen.body
        )
        await pilot.click("#confirm")
        await settle(app, pilot)
        assert eng.curator.get(merge).proposal.status == "undone"
        assert eng.memories.get(ids["mem"]["staging"]).tier == "active"
        assert eng.memories.get(ids["mem"]["staging"]).absorbed_into is None
        with pytest.raises(NotFound):
            eng.memories.get(result)
        assert table.row_count == 0
        assert app.errors == []


async def test_dry_run_writes_nothing_and_real_run_reports(seeded):
    eng, ids = seeded
    eng.add_memory(
        "The staging database is refreshed each night from production data",
        agent="atlas",
        user="dana",
        category="fact",
        dedup=False,
    )
    runs_before = len(eng.curator.runs())
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        pane, table = await _open(app, pilot)
        assert "run #1" in str(app.query_one("#run-summary").render())
        await pilot.press("D")
        await settle(app, pilot)
        summary = str(app.query_one("#run-summary").render())
        assert summary.startswith("dry run") and "dry run (nothing written)" in str(
            app.query_one("#curator-run").border_title
        )
        assert len(eng.curator.runs()) == runs_before
        await pilot.press("r")
        await settle(app, pilot)
        await confirm_yes(app, pilot)  # r asks first (#27: no stray key acts)
        assert len(eng.curator.runs()) == runs_before + 1
        assert "run #2" in str(app.query_one("#run-summary").render())
        assert app.query_one("#curator-progress-row").display is False
        await pilot.press("v")
        await pilot.pause()
        from console.app.widgets.report import ReportScreen

        assert isinstance(app.screen, ReportScreen) and "# Curator run 2" in app.screen.markdown
        assert app.errors == []
