"""Pane 7 — Forget & Audit: a request is previewed with counts, executed only after typing
FORGET, removes the rows (checked in the database) and verifies residue 0; the audit filters."""

from __future__ import annotations

import pytest
from textual.widgets import Button, Input, Select

from console.app.widgets.confirm import ConfirmModal
from console.app.widgets.table import DataGrid
from engine import NotFound
from screens.forget_audit import parse_audit_filter

from .helpers import make_app, row, settle


def test_parse_audit_filter():
    f = parse_audit_filter("actor:tester target:memory:12 since:2026-01-01 forget")
    assert f == {"actor": "tester", "target": "memory:12", "since": 1767225600.0, "text": "forget"}


async def test_forget_from_search_previews_then_requires_FORGET(seeded):
    eng, ids = seeded
    mid = ids["mem"]["fridays"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "slash", *"deploy fridays", "enter")
        await settle(app, pilot)
        await pilot.press("escape", "f")  # forget the selected hit
        await settle(app, pilot)
        assert app.query_one("#tabs").active == "forget"
        assert app.query_one("#forget-scope", Select).value == "memory"
        assert app.query_one("#forget-value", Input).value == str(mid)
        assert app.focused is app.query_one("#forget-reason", Input)
        app.query_one("#forget-reason", Input).value = "user asked to erase it"
        await pilot.press("enter")
        await settle(app, pilot)
        preview = app.query_one("#forget-preview", DataGrid)
        assert f"memory:{mid}" in [
            preview.coordinate_to_cell_key((i, 0)).row_key.value for i in range(preview.row_count)
        ]
        assert "1 memories" in str(preview.border_title)
        case = eng.forget.list()[0]
        assert case.status == "previewed" and case.requested_by == "tester"
        cases = app.query_one("#cases", DataGrid)
        assert cases.selected_key == str(case.id) and app.focused is cases
        # the confirmation states what goes, and stays disabled until FORGET is typed
        await pilot.press("X")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ConfirmModal) and "PERMANENTLY remove 1 memories" in modal.body
        assert modal.query_one("#confirm", Button).disabled
        await pilot.press(*"forget", "enter")  # wrong case: nothing happens
        await pilot.pause()
        assert app.screen is modal and modal.query_one("#confirm", Button).disabled
        await pilot.press("escape")
        await settle(app, pilot)
        assert eng.memories.get(mid).content == "Never deploy on Fridays"  # cancelled: still there
        await pilot.press("X")
        await pilot.pause()
        await pilot.press(*"FORGET", "enter")
        await settle(app, pilot)
        with pytest.raises(NotFound):
            eng.memories.get(mid)
        assert all(h.id != mid for h in eng.search("Fridays", record_access=False).hits)
        case = eng.forget.get(case.id)
        assert case.status == "verified" and case.residue == 0
        status = str(app.query_one("#case-detail").render())
        assert f"case #{case.id} verified" in status and "residue 0" in status
        assert row(cases, 0)[1] == "verified"
        assert app.errors == []


async def test_query_scope_forget_and_audit_filter(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("7", "n")
        assert app.focused is app.query_one("#forget-value", Input)
        app.query_one("#forget-scope", Select).value = "query"
        await pilot.press(*"白马尖", "tab", *"privacy request", "enter")
        await settle(app, pilot)
        preview = app.query_one("#forget-preview", DataGrid)
        kinds = {row(preview, i)[1] for i in range(preview.row_count)}
        assert {"memory", "message"} <= kinds
        await pilot.press("X")
        await pilot.pause()
        await pilot.press(*"FORGET", "enter")
        await settle(app, pilot)
        assert eng.sessions.search_messages("白马尖") == []
        with pytest.raises(NotFound):
            eng.memories.get(ids["mem"]["dabie"])
        # the audit log: filter to forget actions; no row quotes the forgotten text
        await pilot.press("slash", *"action:forget")
        await settle(app, pilot)
        audit = app.query_one("#audit", DataGrid)
        assert audit.row_count == 1 and row(audit, 0)[3] == "forget"
        await pilot.press("ctrl+a", "ctrl+k")
        await settle(app, pilot)
        rows = [" ".join(map(str, row(audit, i))) for i in range(audit.row_count)]
        assert len(rows) == len(eng.audit.log())
        assert not any("白马尖" in r for r in rows)
        assert app.errors == []
