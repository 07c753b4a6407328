"""Issue #27: every table sorts (`s`/`S`, or `o`/`O` where the pane keeps `s`/`S`; a header click)
and exports what it shows (`ctrl+e`, CSV or JSON). Driven by keys over the seeded database."""

from __future__ import annotations

import csv
import json

from textual.widgets import Input

from console.app.widgets.confirm import ConfirmModal, PromptModal
from console.app.widgets.export_dialog import ExportDialog
from console.app.widgets.table import DataGrid
from console.app.widgets.table_tools import sort_key

from .helpers import make_app, settle


def _col(table: DataGrid, label: str) -> list[str]:
    i = [c.label.plain for c in table.ordered_columns].index(label)
    return [getattr(v, "plain", str(v)) for v in (table.get_row_at(r)[i] for r in range(table.row_count))]


def _keys(table: DataGrid) -> list[str]:
    return [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]


def _sorted(values: list[str], reverse: bool = False) -> list[str]:
    return sorted(values, key=lambda v: sort_key(v, reverse), reverse=reverse)


async def _pane(app, pilot, key: str, table_id: str) -> DataGrid:
    await pilot.press(key)
    await settle(app, pilot)
    table = app.query_one(f"#{table_id}", DataGrid)
    table.focus()
    await settle(app, pilot)
    return table


async def _key(pilot, *keys: str) -> None:
    """A sort key: it acts at once (no worker), so one pause lets the screen catch up."""
    await pilot.press(*keys)
    await pilot.pause()


async def _sort_twice(app, pilot, table: DataGrid, next_key: str) -> None:
    """`next_key` twice: by the first column, then the second (ascending)."""
    await _key(pilot, next_key)
    first = table.ordered_columns[0].label.plain
    assert table.sort_column == first and "sorted by" in str(table.border_subtitle)
    await _key(pilot, next_key)
    assert table.sort_column == table.ordered_columns[1].label.plain


async def test_every_pane_family_sorts_with_its_keys(lifecycle):
    """One console visits each pane family: the sort keys act on its table, and a pane that binds
    `s` or `S` itself keeps it (the alternate `o` / `O` sorts there)."""
    eng, _ids, _ = lifecycle
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        # Rules (3): `s` is "set score", so `o` sorts and `S` reverses.
        rules = await _pane(app, pilot, "3", "rules-table")
        await _key(pilot, "o")
        assert rules.sort_column == "id"
        assert _col(rules, "id") == _sorted(_col(rules, "id"))
        await pilot.press("o")  # the next column: score, ascending
        await settle(app, pilot)
        scores = _col(rules, "score")
        assert scores == _sorted(scores) and scores != _sorted(scores, reverse=True)
        await _key(pilot, "S")
        assert rules.sort_reverse and _col(rules, "score") == _sorted(scores, reverse=True)
        await pilot.press("s")  # still the pane's own key
        await settle(app, pilot)
        assert isinstance(app.screen, PromptModal)
        await _key(pilot, "escape")
        # The sort survives a refresh (what every database change does), the cursor on its row.
        rules.move_cursor(row=2)
        chosen, order = rules.selected_key, _keys(rules)
        app.pane("rules").refresh_data()
        await settle(app, pilot)
        assert _keys(rules) == order and rules.selected_key == chosen
        # A click on the "score" header sorts by it ascending; a second click reverses.
        x = rules.ordered_columns[0].get_render_width(rules) + 2
        await pilot.click("#rules-table", offset=(x, 1))
        await settle(app, pilot)
        assert rules.sort_column == "score" and not rules.sort_reverse
        assert _col(rules, "score") == _sorted(scores) and rules.selected_key == chosen
        await pilot.click("#rules-table", offset=(x, 1))
        await settle(app, pilot)
        assert rules.sort_column == "score" and rules.sort_reverse
        # Flows (4): `s` and `S` both sort.
        flows = await _pane(app, pilot, "4", "flows-table")
        await _sort_twice(app, pilot, flows, "s")
        uses = _col(flows, "uses")
        assert [float(u) for u in uses] == sorted(float(u) for u in uses)
        await _key(pilot, "S")
        assert [float(u) for u in _col(flows, "uses")] == sorted((float(u) for u in uses), reverse=True)
        # Decay (6).
        decay = await _pane(app, pilot, "6", "decay-forecast")
        await _sort_twice(app, pilot, decay, "s")
        ids = _col(decay, "id")
        assert ids == _sorted(ids)
        # Forget & Audit (7): the audit log, newest first as loaded; `S` on actor.
        audit = await _pane(app, pilot, "7", "audit")
        loaded = _keys(audit)
        await _sort_twice(app, pilot, audit, "s")
        await pilot.press("s")  # third column: actor
        await settle(app, pilot)
        actors = _col(audit, "actor")
        assert audit.sort_column == "actor" and actors == _sorted(actors)
        for _ in range(len(audit.ordered_columns) - 2):  # past the last column: the pane's order
            await _key(pilot, "s")
        assert audit.sort_column is None and _keys(audit) == loaded
        # Curator (5): `S` is "reject stale", so `O` reverses there; `s` sorts.
        proposals = await _pane(app, pilot, "5", "proposals")
        await _key(pilot, "s")
        assert proposals.sort_column == "✓"
        await _key(pilot, "O")
        assert proposals.sort_reverse
        # Sessions (1): `s` searches messages, `o` sorts.
        sessions = await _pane(app, pilot, "1", "session-list")
        await _key(pilot, "o")
        assert sessions.sort_column == "started"
        await pilot.press("s")
        await settle(app, pilot)
        assert isinstance(app.focused, Input)
        await pilot.press("escape")
        # Recalls (8) and Search (2, where `o` is the pane's): `s` sorts.
        recalls = await _pane(app, pilot, "8", "recall-list")
        await _key(pilot, "s")
        assert recalls.sort_column == "query"
        results = await _pane(app, pilot, "2", "results")
        await _key(pilot, "s")
        assert results.sort_column == "✓"
    assert app.errors == []


async def _export(app, pilot, path: str, fmt: str | None = None) -> None:
    await pilot.press("ctrl+e")
    await settle(app, pilot)
    assert isinstance(app.screen, ExportDialog)
    inp = app.screen.query_one("#export-path", Input)
    inp.value = path
    if fmt is not None:
        from textual.widgets import Select

        app.screen.query_one("#export-format", Select).value = fmt
    await settle(app, pilot)
    await pilot.press("enter")
    await settle(app, pilot)


async def test_export_the_audit_view_as_csv_and_json_with_a_trail(lifecycle, tmp_path, monkeypatch):
    """What the table shows, in its shown order; evidence named in the notice log; an existing
    file replaced only after a confirmation; a bad path says why in one line and writes nothing;
    stored escapes and formulas never reach the file raw."""
    eng, _ids, _ = lifecycle
    eng.add_memory('=HYPERLINK("http://x") zebrafish \x1b]0;pwned\x07 notes', agent="atlas")
    monkeypatch.chdir(tmp_path)
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        audit = await _pane(app, pilot, "7", "audit")
        await pilot.press("s", "s", "s")  # sorted by actor
        await settle(app, pilot)
        shown = [[getattr(c, "plain", str(c)) for c in audit.get_row_at(i)] for i in range(audit.row_count)]
        await _export(app, pilot, "audit.csv")
        with (tmp_path / "audit.csv").open(newline="") as f:
            got = list(csv.reader(f))
        assert got[0] == [c.label.plain for c in audit.ordered_columns]
        assert got[1:] == shown  # every row, in the sorted order
        assert (tmp_path / "audit.csv").stat().st_mode & 0o077 == 0  # evidence: the owner only
        notice = app.notices.newest_first()[0].message
        assert "evidence export" in notice and str(tmp_path / "audit.csv") in notice
        assert f"{len(shown)} rows" in notice
        # JSON (a bare name gets the format's suffix), with its provenance.
        await _export(app, pilot, "audit-view", fmt="json")
        doc = json.loads((tmp_path / "audit-view.json").read_text())
        assert doc["table"] == "audit" and doc["sort"] == "actor ▲" and doc["exported_by"] == eng.actor
        assert [r["actor"] for r in doc["rows"]] == [r[2] for r in shown]
        # An existing file: asked first; cancelling writes nothing.
        before = (tmp_path / "audit.csv").read_bytes()
        await _export(app, pilot, "audit.csv")
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        await settle(app, pilot)
        assert isinstance(app.screen, ExportDialog)
        await pilot.press("escape")
        await settle(app, pilot)
        assert (tmp_path / "audit.csv").read_bytes() == before
        # A hostile path: one line in the dialog, which stays open; nothing written.
        await _export(app, pilot, str(tmp_path / "no-such-dir" / "x.csv"))
        assert isinstance(app.screen, ExportDialog)
        err = app.screen.query_one("#export-error")
        assert "does not exist" in err.message and "\n" not in err.message
        await _export_text(app, pilot, str(eng.path))  # the database itself
        assert "database's own file" in app.screen.query_one("#export-error").message
        await pilot.press("escape")
        await settle(app, pilot)
        assert not (tmp_path / "no-such-dir").exists()
        # Stored text with an OSC escape and a spreadsheet formula, exported from Search: the file
        # holds the escape spelled out and the formula neutralised.
        await pilot.press("2")
        await settle(app, pilot)
        await pilot.press("slash")
        await pilot.press(*"zebrafish")
        await pilot.press("enter")
        await settle(app, pilot)
        results = app.query_one("#results", DataGrid)
        assert results.row_count >= 1
        results.focus()
        await settle(app, pilot)
        await _export(app, pilot, "hits.csv")
        raw = (tmp_path / "hits.csv").read_text()
        assert "\x1b" not in raw and "\x07" not in raw and "\\x1b]0;pwned\\x07" in raw
        content = next(csv.DictReader(raw.splitlines()))["content"]
        assert content.startswith("'=HYPERLINK")
    assert app.errors == []


async def _export_text(app, pilot, path: str) -> None:
    """Type another path into the open dialog and submit it."""
    inp = app.screen.query_one("#export-path", Input)
    inp.value = path
    inp.focus()
    await settle(app, pilot)
    await pilot.press("enter")
    await settle(app, pilot)
