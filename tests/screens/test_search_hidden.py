"""Issue #25: Search points at stronger matches it hides — when an archived (or filtered-out)
memory would outrank the shown hits, the status line says so with the action, even when the
results are not thin."""

from __future__ import annotations

from textual.widgets import Input, Select

from .helpers import make_app, settle


async def _search(app, pilot, text: str):
    await pilot.press("2", "slash", *text, "enter")
    await settle(app, pilot)
    return app.pane("search")


async def test_status_line_names_an_archived_memory_that_would_outrank_the_hits(seeded):
    eng, ids = seeded
    old = ids["mem"]["old_deploy"]  # archived: "Deploys used to go through Jenkins job deploy-prod"
    app = make_app(eng)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        pane = await _search(app, pilot, "deploys jenkins job")
        assert len(pane.result.hits) >= 5 and old not in {h.id for h in pane.result.hits}  # not thin
        wide = eng.search("deploys jenkins job", k=25, tier="all", record_access=False)
        assert wide.hits[0].id == old  # it would rank first
        status = str(app.query_one("#search-status").render())
        assert f"1 stronger hidden: #{old} archived (tier: all tiers, R restores)" in status
        # all tiers: it is shown, nothing is hidden any more
        app.query_one("#f-tier", Select).value = "all"
        await settle(app, pilot)
        assert pane.result.hits[0].id == old
        assert "hidden" not in str(app.query_one("#search-status").render())
        # a filter that hides stronger matches says which filter to clear
        app.query_one("#f-agent", Input).value = "scout"
        app.query_one("#query", Input).focus()
        await pilot.press("enter")
        await settle(app, pilot)
        status = str(app.query_one("#search-status").render())
        assert "stronger hidden:" in status and "agent" in status
        assert "clear the agent filter" in status
        assert app.errors == []
