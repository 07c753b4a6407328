"""The shell's shared behaviour (issue 16): escape returns to the pane's main table from any
filter or input, focus is visible, row keys refuse (and say so) while focus is elsewhere, the
full-row view, the flexible column, the first row after a filter, dialogs that keep invalid input
open with an inline error, and the header's labelled counts."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from console.app.widgets.confirm import ConfirmModal, DialogError, PromptModal, number_between, required
from console.app.widgets.header import StatusHeader
from console.app.widgets.rowview import RowView
from console.app.widgets.table import DataGrid

from .helpers import make_app, row, settle

PANES = [
    ("1", "#filter", "#session-list"),
    ("2", "#query", "#results"),
    ("3", "#rules-filter", "#rules-table"),
    ("4", "#flows-filter", "#flows-table"),
    ("7", "#audit-filter", "#cases"),
]


@pytest.mark.parametrize(("key", "filter_sel", "main_sel"), PANES)
async def test_escape_from_a_filter_returns_to_the_main_table(seeded, key, filter_sel, main_sel):
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(key)
        await settle(app, pilot)
        await pilot.press("slash")
        await pilot.pause()
        assert app.focused is app.query_one(filter_sel)
        assert isinstance(app.focused, Input)
        await pilot.press("escape")
        await pilot.pause()
        main = app.query_one(main_sel, DataGrid)
        assert app.focused is main
        # the focused table is visibly marked: a heavy accent border, unlike the others
        assert main.styles.border_top[0] == "heavy"


async def test_escape_from_another_table_or_a_select_returns_to_the_main_table(seeded):
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        app.query_one("#audit", DataGrid).focus()
        await pilot.pause()
        assert app.query_one("#audit", DataGrid).styles.border_top[0] == "heavy"
        assert app.query_one("#cases", DataGrid).styles.border_top[0] != "heavy"
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is app.query_one("#cases", DataGrid)
        app.query_one("#forget-scope", Select).focus()
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is app.query_one("#cases", DataGrid)


async def test_a_row_key_with_focus_elsewhere_does_nothing_and_says_so(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        eng.forget.open("memory", [ids["mem"]["fridays"]], "user asked")
        await pilot.press("7")
        await settle(app, pilot)
        app.query_one("#audit", DataGrid).focus()
        await pilot.pause()
        before = [n.message for n in app._notifications]
        await pilot.press("p")  # preview acts on the selected case: focus is on the audit log
        await settle(app, pilot)
        said = [n.message for n in app._notifications if n.message not in before]
        assert any("acts on the selected row of the forget cases" in m for m in said), said
        assert eng.forget.list()[0].status == "open"  # not previewed
        await pilot.press("escape", "p")  # on the cases table: it runs
        await settle(app, pilot)
        assert eng.forget.list()[0].status == "previewed"


async def test_enter_or_v_opens_the_full_row_and_escape_closes_it(seeded):
    eng, ids = seeded
    long_text = "The operator keeps a very long note " + "word " * 60 + "END-OF-NOTE"
    eng.add_memory(long_text, agent="atlas")
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")  # the audit log holds the add: its row in full
        await settle(app, pilot)
        audit = app.query_one("#audit", DataGrid)
        audit.focus()
        audit.move_cursor(row=0)
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        view = app.screen
        assert isinstance(view, RowView)
        labels = [label for label, _ in view.fields]
        assert labels == ["#", "at", "actor", "action", "target", "reason", "summary"]
        assert dict(view.fields)["action"] == "add"
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, RowView) and app.focused is audit
        # `v` too
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, RowView)
        await pilot.press("escape")


async def test_v_in_a_pane_that_binds_v_keeps_the_pane_action(lifecycle):
    eng, _, _ = lifecycle
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("3")  # Rules: v is revive
        await settle(app, pilot)
        assert app.query_one("#rules-table", DataGrid).row_count
        await pilot.press("v")
        await pilot.pause()
        assert not isinstance(app.screen, RowView)
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("enter")  # enter still opens the row
        await pilot.pause()
        assert isinstance(app.screen, RowView)


def test_validators():
    assert number_between(0, 10, "score")("abc") == "score must be a number between 0 and 10, not 'abc'"
    assert number_between(0, 10, "score")("11") == "score must be between 0 and 10"
    assert number_between(0, 10, "score")("nan")
    assert number_between(0, 10, "score")("7") is None
    assert required("a reason")("  ") == "a reason is required"


async def test_prompt_keeps_invalid_input_open_with_an_inline_error(seeded):
    eng, _ = seeded
    app = make_app(eng)
    got: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        pane = app.current_pane()
        assert pane is not None
        pane.prompt("Score (0-10):", got.append, validate=number_between(0, 10, "score"))
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, PromptModal)
        await pilot.press(*"abc", "enter")
        await pilot.pause()
        assert app.screen is modal and got == []
        err = modal.query_one("#prompt-error", DialogError)
        assert "score must be a number" in err.message and err.display
        assert modal.query_one(Input).value == "abc"  # kept for a fix
        await pilot.press(*["backspace"] * 3, "7", "enter")
        await pilot.pause()
        assert got == ["7"] and not isinstance(app.screen, PromptModal)


async def test_confirm_with_the_wrong_word_stays_open_and_says_why(seeded):
    eng, _ = seeded
    app = make_app(eng)
    done: list[bool] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        pane = app.current_pane()
        assert pane is not None
        pane.confirm("Forget?", "removes 1 memory", lambda: done.append(True), require_text="FORGET")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ConfirmModal)
        await pilot.press(*"forgot", "enter")
        await pilot.pause()
        assert app.screen is modal and not done
        assert "Type FORGET exactly" in modal.query_one("#confirm-error", DialogError).message
        await pilot.press(*["backspace"] * 6, *"FORGET", "enter")
        await pilot.pause()
        assert done == [True]


async def test_the_flexible_column_takes_the_free_width(seeded):
    eng, _ = seeded
    widths: dict[object, int] = {}
    for size in ((120, 40), (250, 50)):
        app = make_app(eng)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            grid = app.query_one("#session-list", DataGrid)
            title = next(c for c in grid.columns.values() if c.label.plain == "title")
            widths[size] = title.width
            # the cell holds the whole title; the column cuts it to the width
            cells = [row(grid, i)[1] for i in range(grid.row_count)]
            assert "Migrate CI from Jenkins to GitHub Actions" in cells
            await pilot.press("7")
            await settle(app, pilot)
            audit = app.query_one("#audit", DataGrid)
            summary = next(c for c in audit.columns.values() if c.label.plain == "summary")
            used = sum(c.get_render_width(audit) for c in audit.columns.values())
            if size == (250, 50):  # no free width left over (at 120 the others need it all)
                assert used == audit.scrollable_content_region.width
            widths[(size, "audit")] = summary.width
    assert widths[(250, 50)] >= 41 > 13
    assert widths[(250, 50)] > widths[(120, 40)]
    assert widths[((250, 50), "audit")] > 100 > widths[((120, 40), "audit")]


async def test_the_cursor_lands_on_the_first_row_after_a_filter(seeded):
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        grid = app.query_one("#session-list", DataGrid)
        assert grid.row_count == 4
        grid.move_cursor(row=3)
        await settle(app, pilot)
        assert grid.selected_key == "s-deploy"
        await pilot.press("slash", *"agent:atlas")
        await settle(app, pilot)
        assert grid.row_count == 2 and grid.cursor_row == 0
        assert grid.selected_key == "s-deploy-2"  # the first row, not the old one
        # a refresh that is not a filter keeps the selection
        grid.move_cursor(row=1)
        await settle(app, pilot)
        app.data_changed()
        await settle(app, pilot)
        assert grid.selected_key == "s-deploy"


async def test_message_search_snippets_centre_on_the_match(seeded):
    eng, _ = seeded
    before = "lorem ipsum dolor sit amet " * 12
    eng.sessions.add("s-long", agent="atlas", user="dana", source="cli", title="Long notes")
    eng.sessions.add_messages("s-long", [dict(role="user", content=before + "zanzibar " + before)])
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("s", *"zanzibar", "enter")
        await settle(app, pilot)
        hits = app.query_one("#message-hits", DataGrid)
        assert hits.row_count == 1
        snippet = row(hits, 0)[3]
        assert snippet.startswith("…") and snippet.endswith("…")
        at = snippet.index("zanzibar")
        middle = at + len("zanzibar") // 2
        assert abs(middle - len(snippet) // 2) <= 2, snippet
        col = next(c for c in hits.columns.values() if c.label.plain == "snippet")
        assert len(snippet) <= col.width


async def test_the_header_labels_every_count(lifecycle):
    eng, _, _ = lifecycle
    by_status = eng.rules.counts()
    total, retired = sum(by_status.values()), by_status.get("retired", 0)
    app = make_app(eng)
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(app, pilot)
        text = app.query_one("#status", StatusHeader).plain
        assert f"rules {total - retired} active / {total}" in text
        assert "memories " in text and " core · " in text and " archived" in text
        assert "proposals " in text and " pending" in text and "forget " in text and " open" in text
        assert "test.db · tester · admin" in text


async def test_at_80_columns_the_header_keeps_every_count_with_short_labels(lifecycle):
    eng, _, _ = lifecycle
    by_status = eng.rules.counts()
    total, retired = sum(by_status.values()), by_status.get("retired", 0)
    app = make_app(eng)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        header = app.query_one("#status", StatusHeader)
        assert header.plain.rstrip().endswith("test.db · tester · admin")  # who you are: never cut
        assert header.content_region.width >= len(header.plain)  # everything fits on the line
        shown = header.plain
        assert f"rules {total - retired}/{total}" in shown
        assert "mem " in shown and "prop " in shown and "fgt " in shown
        await pilot.resize_terminal(200, 40)
        await settle(app, pilot)
        assert f"rules {total - retired} active / {total}" in header.plain  # room again: full labels


async def test_audit_filter_bare_words_prefixes_and_unknown_keys(seeded):
    eng, ids = seeded
    mid = ids["mem"]["fridays"]
    eng.memories.pin(mid, reason="Keep it for the CANARY rollout")
    eng.memories.archive(mid, reason="old")
    app = make_app(eng)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        audit = app.query_one("#audit", DataGrid)
        await pilot.press("slash", *"canary")
        await settle(app, pilot)
        rows = [row(audit, i) for i in range(audit.row_count)]
        assert rows and all("canary" in (r[5] + r[6]).lower() for r in rows)
        assert any(r[3] == "pin" for r in rows)
        app.query_one("#audit-filter", Input).value = "action:arch*"
        await settle(app, pilot)
        rows = [row(audit, i) for i in range(audit.row_count)]
        assert rows and all(r[3].startswith("arch") for r in rows)
        warning = app.query_one("#audit-warning")
        assert not warning.display
        app.query_one("#audit-filter", Input).value = "acter:tester canary"
        await settle(app, pilot)
        # One language (#27): the hint names the bad token, its column and the keys that work
        assert warning.display and "unknown key 'acter'" in str(warning.render())
        assert "did you mean actor:" in str(warning.render())
        assert audit.row_count >= 1  # the rows stay as the last good filter left them
    assert [e.action for e in eng.audit.log(text="canary rollout")] == ["pin"]
    assert {e.action for e in eng.audit.log(action="arch*")} == {"archive"}
    assert eng.audit.log(text="100%_") == []


async def test_search_rules_and_flows_tables_give_their_text_column_the_free_width(lifecycle):
    eng, _, _ = lifecycle
    app = make_app(eng)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "slash", *"deploy", "enter", "escape")
        await settle(app, pilot)
        for key, table_id, label, least in (
            (None, "#results", "content", 60),
            ("3", "#rules-table", "rule", 60),
            ("4", "#flows-table", "flow", 30),  # the flow's detail sits beside its table
        ):
            if key:
                await pilot.press(key)
                await settle(app, pilot)
            grid = app.query_one(table_id, DataGrid)
            assert grid.row_count > 0, table_id
            col = next(c for c in grid.columns.values() if c.label.plain == label)
            used = sum(c.get_render_width(grid) for c in grid.columns.values())
            assert used == grid.scrollable_content_region.width, table_id  # nothing left over
            assert col.width > least, (table_id, col.width)
        # the search cell holds the whole text (no cut at 48 characters); the column cuts it
        pane = app.pane("search")
        longest = max(pane.result.hits, key=lambda h: len(h.content))
        cells = [row(app.query_one("#results", DataGrid), i)[5] for i in range(len(pane.result.hits))]
        assert any(c.endswith(" ".join(longest.content.split())) for c in cells)  # "weak · " may lead
