"""Issue #16, the lifecycle panes: run decay now from the Decay pane (previewed, confirmed),
marking in the Decay crossings list and the Rules pane, adding a rule, charts that say what they
show."""

from __future__ import annotations

from textual.widgets import Static

from console.widgets.confirm import ConfirmModal
from console.widgets.table import DataGrid
from engine.clock import DAY

from .helpers import make_app, settle


def _tiers(eng) -> dict[int, str]:
    return {m.id: m.tier for m in eng.memories.list()}


def _rules(eng) -> dict[int, str]:
    return {r.id: r.status for r in eng.rules.list()}


async def test_run_decay_now_previews_then_writes_only_after_confirming(lifecycle):
    eng, ids, clock = lifecycle
    clock.advance(20 * DAY)  # the two aged episodic memories and three rules are now due
    m = ids["mem"]
    before_tiers, before_rules = _tiers(eng), _rules(eng)
    before_audit = len(eng.audit.log(limit=10_000))
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        app.query_one("#decay-forecast", DataGrid).focus()
        await pilot.press("D")
        await settle(app, pilot)
        modal = app.screen
        assert isinstance(modal, ConfirmModal)
        body = str(modal.query_one("#confirm-body", Static).render())
        assert "2 memories move to the archived tier" in body
        assert f"m{m['hotfix']}" in body and f"m{m['standup']}" in body
        assert "3 rules change score band (0 demoted, 3 retired)" in body
        # the preview wrote nothing; cancelling writes nothing
        assert _tiers(eng) == before_tiers and _rules(eng) == before_rules
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmModal)
        assert _tiers(eng) == before_tiers and _rules(eng) == before_rules
        assert len(eng.audit.log(limit=10_000)) == before_audit
        # again, and confirm: the pass runs, audited, and the pane refreshes
        await pilot.press("D")
        await settle(app, pilot)
        await pilot.click("#confirm")
        await settle(app, pilot)
        after = _tiers(eng)
        assert after[m["hotfix"]] == "archived" and after[m["standup"]] == "archived"
        assert sum(1 for k, s in _rules(eng).items() if s != before_rules[k]) == 3
        assert len(eng.audit.log(limit=10_000)) > before_audit
        view = app.pane("decay").view  # type: ignore[attr-defined]
        assert sum(view.distribution.counts["archived"]) == 3  # redrawn from the new state
