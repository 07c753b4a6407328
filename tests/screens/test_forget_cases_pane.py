"""Pane 7 as an operator finishes forget cases (issues #25, #27), keys pressed and the database
asserted: a query scope that matches whole words (not "sample"), a preview with the matched
words highlighted that shows many rows at 80×24, marking and dropping rows then previewing again,
withdrawing with a reason, deadlines (OVERDUE) in the cases table, and a second operator's
approval."""

from __future__ import annotations

import dataclasses

from textual.widgets import Select

from console.app.widgets.header import StatusHeader
from console.app.widgets.table import DataGrid
from engine.clock import DAY
from engine.identity import Identity

from .helpers import make_app, row, settle

SAMPLE_RULE = "Flag sample sizes under 30"
SAM = [
    "Sam holds ES futures; typical size is 2 to 3 contracts",
    "Sam's largest drawdowns happen on CPI release mornings",
    "Sam trades ES and NQ futures, rarely equities",
    "Trading hours for Sam: 9:30 to 11:30 ET only",
    "Sam dislikes alerts after 8pm",
    "Ask Sam before raising position limits",
    "SAM wants weekly summaries on Fridays",
    "Sam's risk budget is reviewed every quarter",
]


def _seed(eng) -> list[int]:
    eng.rules.add(SAMPLE_RULE, score=9.0, pinned=True)
    return [eng.add_memory(t, dedup=False) for t in SAM]


async def _open_query(app, pilot, text: str) -> None:
    await settle(app, pilot)
    await pilot.press("7", "n")
    app.query_one("#forget-scope", Select).value = "query"
    await pilot.press(*text, "tab", *"user asked", "enter")
    await settle(app, pilot)


async def test_word_scope_preview_fits_80x24_then_drop_and_withdraw(seeded):
    eng, _ = seeded
    mids = _seed(eng)
    app = make_app(eng)
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_query(app, pilot, "Sam")
        preview = app.query_one("#forget-preview", DataGrid)
        texts = [row(preview, i)[4] for i in range(preview.row_count)]
        assert preview.row_count == len(SAM) and not any("sample" in t for t in texts)
        # the preview took the audit log's room: at 80x24 at least 7 rows are on screen
        assert preview.scrollable_content_region.height >= 7 and not app.query_one("#audit").display
        first = preview.get_row_at(0)[4]
        assert any("reverse" in str(sp.style) for sp in first.spans)  # "Sam" highlighted
        case = eng.forget.list()[0]
        assert case.workflow["match"] == "word" and case.selected["rules"] == []

        # mark two rows (the first space moves to the preview), drop them: the case is narrowed
        await pilot.press("space", "space", "j", "space", "x")
        await settle(app, pilot)
        case = eng.forget.get(case.id)
        assert len(case.workflow["excluded"]["memory"]) == 2
        assert len(case.selected["memories"]) == len(SAM) - 2 and preview.row_count == len(SAM) - 2
        assert "2 dropped" in str(preview.border_title)

        # withdraw with a reason: the case closes, keeps no text, leaves the open count
        await pilot.press("escape", "w")
        await pilot.pause()
        await pilot.press(*"asked about the wrong Sam", "enter")
        await settle(app, pilot)
        case = eng.forget.get(case.id)
        assert case.status == "withdrawn" and case.scope_value.startswith("hmac:")
        assert eng.counts().open_forget_requests == 0
        assert all(eng.memories.get(m) for m in mids)
        cases = app.query_one("#cases", DataGrid)
        assert row(cases, 0)[1] == "withdrawn" and "withdrawn by tester" in str(
            app.query_one("#case-detail").render()
        )
        assert app.errors == []


async def test_overdue_case_stands_out_and_second_operator_approves(seeded):
    eng, _ = seeded
    eng.settings = dataclasses.replace(
        eng.settings, forget=dataclasses.replace(eng.settings.forget, approvals=2)
    )
    mids = _seed(eng)
    with eng.acting_as(Identity("alice", "operator", grants=frozenset({"forget"}))):
        late = eng.forget.open("memory", [mids[0]], "asked", deadline=eng.clock.now() - 3 * DAY)
        soon = eng.forget.open("memory", [mids[1]], "asked")
        eng.forget.preview(soon.id)
    app = make_app(eng)  # the console acts as "tester": a second operator
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        cases = app.query_one("#cases", DataGrid)
        header = app.query_one("#status", StatusHeader).plain  # the header count, long or short form
        assert "forget 2 open · 1 OVERDUE" in header or "forget 2·1 LATE" in header
        assert "1 OVERDUE" in str(cases.border_title) and "next due: 30 days left" in str(cases.border_title)
        by_id = {row(cases, i)[0]: row(cases, i) for i in range(cases.row_count)}
        assert by_id[f"#{late.id}"][2] == "OVERDUE 3 days" and by_id[f"#{soon.id}"][2] == "30 days left"
        cell = cases.get_row_at(list(by_id).index(f"#{late.id}"))[2]
        assert "bold" in str(cell.style) and "reverse" in str(cell.style)  # not colour alone

        cases.select_key(soon.id)
        await pilot.press("X")  # not approved yet: refused, nothing removed
        await settle(app, pilot)
        await pilot.press("a")
        await pilot.pause()
        await pilot.click("#confirm")
        await settle(app, pilot)
        r = eng.forget.get(soon.id)
        assert [a["by"] for a in r.workflow["approvals"]] == ["tester"]
        text = str(app.query_one("#case-detail").render())
        assert "requested by alice" in text and "approved by tester" in text
        assert eng.memories.get(mids[1])
