"""Pane 1 — Sessions: list + filters, transcript, lineage, message search (CJK), and the links
between messages and the memories derived from them."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from console.app.widgets.table import DataGrid
from engine.filter_language import FilterError
from screens.sessions import parse_filter

from .helpers import make_app, row, settle


def test_parse_filter():
    f = parse_filter("agent:atlas user:dana source:cli since:2025-12-29 migrate ci")
    assert f["agent"] == "atlas" and f["user"] == "dana" and f["source"] == "cli"
    assert f["text"] == "migrate ci" and f["since"] == 1766966400.0
    # One language (#27): an unknown key is an error naming it; quoted, it is a word.
    with pytest.raises(FilterError, match="unknown key 'nothing'.*column 1"):
        parse_filter("nothing:here")
    assert parse_filter('"nothing:here"') == {"text": "nothing:here"}


async def test_list_filter_transcript_and_lineage(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        sessions = app.query_one("#session-list", DataGrid)
        assert sessions.row_count == 4
        assert sessions.selected_key == "s-brief"  # newest first
        # filter by agent and text
        await pilot.press("slash", *"agent:atlas")
        await settle(app, pilot)
        assert sessions.row_count == 2
        await pilot.press(*" part two")
        await settle(app, pilot)
        assert [row(sessions, i)[1] for i in range(sessions.row_count)] == ["CI migration, part two"]
        await pilot.press("ctrl+a", "ctrl+k", *"source:web since:2025-12-30")
        await settle(app, pilot)
        assert sessions.row_count == 1 and sessions.selected_key == "s-trip"
        await pilot.press("ctrl+a", "ctrl+k", *"agent:atlas", "escape")
        await settle(app, pilot)
        # open the child session: lineage shows its parent; P goes to the parent
        sessions.select_key("s-deploy-2")
        await settle(app, pilot)
        lineage = str(app.query_one("#lineage").render())
        assert "parent: s-deploy" in lineage and "children: none" in lineage
        await pilot.press("P")
        await settle(app, pilot)
        pane = app.pane("sessions")
        assert pane.detail.session.id == "s-deploy"
        assert "children: s-deploy-2" in str(app.query_one("#lineage").render())
        transcript = app.query_one("#transcript", DataGrid)
        assert transcript.row_count == 4
        roles = [str(row(transcript, i)[1]) for i in range(4)]
        assert roles == ["user", "assistant", "tool", "user"]
        assert row(transcript, 2)[2] == "shell"  # the tool's name
        assert row(transcript, 0)[0] == "2025-12-29 00:00"  # time
        await pilot.press("C")
        await settle(app, pilot)
        assert pane.detail.session.id == "s-deploy-2"
        assert app.errors == []


async def test_message_search_cjk_and_derived_memories(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("s", *"白马尖", "enter")
        await settle(app, pilot)
        hits = app.query_one("#message-hits", DataGrid)
        assert hits.row_count == 1 and hits.selected_key == str(ids["trip_msgs"][1])
        await pilot.press("s", "ctrl+a", "ctrl+k", *"大别", "enter")  # short CJK: LIKE scan
        await settle(app, pilot)
        assert hits.row_count == 2
        await pilot.press("s", "ctrl+a", "ctrl+k", *"fridays", "enter")
        await settle(app, pilot)
        assert hits.selected_key == str(ids["deploy_msgs"][3])
        await pilot.press("enter")  # open it in its session
        await settle(app, pilot)
        transcript = app.query_one("#transcript", DataGrid)
        assert app.pane("sessions").detail.session.id == "s-deploy"
        assert transcript.selected_key == str(ids["deploy_msgs"][3])
        derived = app.query_one("#derived", DataGrid)
        assert sorted(int(row(derived, i)[0][1:]) for i in range(derived.row_count)) == sorted(
            [ids["mem"]["fridays"], ids["mem"]["ticket"]]
        )
        assert "Never deploy on Fridays" in str(
            app.query_one("#message-text").render()
        ) or "never deploy on Fridays" in str(app.query_one("#message-text").render())
        # and back: from a derived memory to its source message (M on the derived table)
        await pilot.press("m")
        assert app.focused is derived
        await pilot.press("M")
        await settle(app, pilot)
        assert transcript.selected_key == str(ids["deploy_msgs"][3])
        assert app.errors == []


async def test_memory_id_jumps_to_source_message(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.query_one("#memory-jump", Input).focus()
        await pilot.press(*str(ids["mem"]["cache"]), "enter")
        await settle(app, pilot)
        pane = app.pane("sessions")
        assert pane.detail.session.id == "s-deploy-2"
        assert app.query_one("#transcript", DataGrid).selected_key == str(ids["deploy2_msgs"][1])
        assert app.query_one("#session-list", DataGrid).selected_key == "s-deploy-2"
        # a memory without a source says so, as a notice
        app.query_one("#memory-jump", Input).value = str(ids["mem"]["dark"])
        app.query_one("#memory-jump", Input).focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert pane.detail.session.id == "s-deploy-2"
        assert app.errors == []


async def test_a_short_terminal_keeps_the_list_and_transcript_and_unfolds_the_rest_on_request(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        pane = app.pane("sessions")
        pane.show_session("s-deploy", ids["deploy_msgs"][3])
        await settle(app, pilot)
        shown = lambda sel: app.query_one(sel).display  # noqa: E731
        assert pane.has_class("-compact")
        assert not shown("#message-hits") and not shown("#derived") and not shown("#jump-bar")
        transcript = app.query_one("#transcript", DataGrid)
        assert transcript.size.height >= 5 and transcript.row_count == 4
        title = app.query_one("#session-list", DataGrid).columns
        assert [c.label.plain for c in title.values()][1] == "title"  # on screen at 80 columns
        await pilot.press("s")  # the message search unfolds, focused
        await settle(app, pilot)
        assert shown("#message-hits") and app.focused is app.query_one("#message-search")
        await pilot.press("escape")  # back on the list: it folds again
        await settle(app, pilot)
        assert not shown("#message-hits")
        await pilot.press("m")
        await settle(app, pilot)
        derived = app.query_one("#derived", DataGrid)
        assert shown("#derived") and app.focused is derived and derived.row_count == 2
        await pilot.press("escape")
        await settle(app, pilot)
        assert not shown("#derived")
    app = make_app(eng)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        assert not app.pane("sessions").has_class("-compact")
        assert app.query_one("#message-hits").display and app.query_one("#derived").display
