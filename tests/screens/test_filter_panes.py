"""One filter language in every listing pane (issue #27): Sessions, Search, Rules, Curator and the
audit log take `key:value` tokens and words in their filter input, complete keys and known values
with tab, and show a bad token as one line under the input (the rows stay as they were)."""

from __future__ import annotations

from textual.widgets import Input

from console.app.widgets.filter_input import FilterHint, FilterInput
from console.app.widgets.table import DataGrid

from .helpers import make_app, row, settle


def hint_of(app, sel: str) -> tuple[bool, str]:
    h = app.query_one(sel, FilterHint)
    return h.display, str(h.render())


async def test_sessions_filter_completes_an_agent_and_refuses_a_bad_token(seeded):
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        sessions = app.query_one("#session-list", DataGrid)
        assert sessions.row_count == 4
        await pilot.press("slash", *"ag")
        await settle(app, pilot)
        assert hint_of(app, "#filter-hint") == (True, "tab completes: agent:")
        await pilot.press("tab", *"sc", "tab")  # key, then a known value (an agent the list showed)
        await settle(app, pilot)
        inp = app.query_one("#filter", FilterInput)
        assert inp.value == "agent:scout" and app.focused is inp
        assert [row(sessions, i)[2] for i in range(sessions.row_count)] == ["scout"]
        await pilot.press(*" since:2026-0")  # half-typed: left out while typing, no error yet
        await settle(app, pilot)
        assert sessions.row_count == 1 and not hint_of(app, "#filter-hint")[1].startswith("filter:")
        await pilot.press("enter")  # done: now it is checked, in one line, and nothing reloads
        await settle(app, pilot)
        shown, said = hint_of(app, "#filter-hint")
        assert shown and said == "filter: since:2026-0 is not a time; use 2026-01-31, 2026-01, 2026, " + (
            "2026-01-31T09:00Z or an age (7d, 24h, 2w) (column 13)"
        )
        assert sessions.row_count == 1
        inp.value = "source:web since:2025-12-30 until:2026-01"  # a month runs to its end
        await settle(app, pilot)
        assert {row(sessions, i)[2] for i in range(sessions.row_count)} == {"scout"}
        assert not hint_of(app, "#filter-hint")[0]
        inp.value = "deploy \x1b[2J\x07" + "x" * 10  # terminal escapes: one line, spelled out
        await settle(app, pilot)
        shown, said = hint_of(app, "#filter-hint")
        assert shown and "control character U+001B" in said and "\x1b" not in said
        inp.value = "agent:" + "a" * 100_000
        await settle(app, pilot)
        assert hint_of(app, "#filter-hint")[1] == "filter: at most 2,000 characters, this one has 100,006"


async def test_search_query_takes_filter_keys_beside_the_widgets(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "slash", *"deploy", "enter")
        await settle(app, pilot)
        results = app.query_one("#results", DataGrid)
        agents = {row(results, i)[4] for i in range(results.row_count)}
        assert "atlas" in agents
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"deploy tier:all agent:hermes", "enter")
        await settle(app, pilot)
        got = [row(results, i) for i in range(results.row_count)]
        assert got and {r[4] for r in got} == {"hermes"}
        assert app.pane("search").result.query == "deploy"  # the keys filter, the words search
        before = results.row_count
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"deploy tier:frozen", "enter")
        await settle(app, pilot)
        status = str(app.query_one("#search-status").render())
        assert status.startswith("filter: tier:frozen is not one of core, active, archived, all")
        assert results.row_count == before
        await pilot.press("ctrl+a", "ctrl+k", *"note: deploy ki")  # prose colon: a word, said so
        await settle(app, pilot)
        shown, said = hint_of(app, "#query-hint")
        assert shown and "tab completes: kind:" in said and "note: is not a filter key here" in said


async def test_rules_filter_keys_and_value_completion(lifecycle):
    eng, _, _ = lifecycle
    app = make_app(eng)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        table = app.query_one("#rules-table", DataGrid)
        everything = table.row_count
        await pilot.press("slash", *"domain:tr", "tab")
        await settle(app, pilot)
        assert app.query_one("#rules-filter", Input).value == "domain:trading"
        rows = [row(table, i) for i in range(table.row_count)]
        assert rows and len(rows) < everything and {r[8] for r in rows} == {"trading"}
        await pilot.press(*" status:nope ")
        await settle(app, pilot)
        shown, said = hint_of(app, "#rules-filter-hint")
        assert shown and said.startswith(
            "filter: status:nope is not one of critical, active, dormant, retired"
        )
        assert table.row_count == len(rows)


async def test_curator_filter_words_kind_and_completion(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("5")
        await settle(app, pilot)
        table = app.query_one("#proposals", DataGrid)
        assert table.row_count == 2
        await pilot.press("slash")
        await pilot.pause()
        assert app.focused is app.query_one("#curator-filter")
        await pilot.press(*"vpn")
        await settle(app, pilot)
        assert table.row_count == 1 and table.selected_key == str(ids["proposals"]["archive"])
        await pilot.press("ctrl+a", "ctrl+k", *"kind:me", "tab")
        await settle(app, pilot)
        assert app.query_one("#curator-filter", Input).value == "kind:merge"
        assert table.row_count == 1 and table.selected_key == str(ids["proposals"]["merge"])
        await pilot.press(*" agent:atlas since:2025")
        await settle(app, pilot)
        assert table.row_count == 1
        await pilot.press(
            "ctrl+a", "ctrl+k", *"vpn kind:semantic", "enter"
        )  # a memory kind, not a proposal's
        await settle(app, pilot)
        shown, said = hint_of(app, "#curator-filter-hint")
        assert shown and said.startswith("filter: kind:semantic is not one of merge")
        assert table.row_count == 1


async def test_audit_filter_completes_known_actions(seeded):
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("7")
        await settle(app, pilot)
        audit = app.query_one("#audit", DataGrid)
        actions = {row(audit, i)[3] for i in range(audit.row_count)}
        assert "proposal-created" in actions or len(actions) > 1
        target = sorted(actions)[0]
        await pilot.press("slash", *"acti", "tab", *target[:3], "tab")
        await settle(app, pilot)
        value = app.query_one("#audit-filter", Input).value
        assert value.startswith("action:") and value != "action:" + target[:3]
        got = {row(audit, i)[3] for i in range(audit.row_count)}
        assert got and got <= actions and all(a.startswith(target[:3]) for a in got)
