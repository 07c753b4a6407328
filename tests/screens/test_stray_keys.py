"""No stray key acts (#27): every key that writes asks first, the dialog's action button has focus,
y/n work, enter never cancels silently, keys typed before the dialog was seen never confirm; the
notification log (ctrl+n); a served operator's role refuses the curator's keys in one line."""

from __future__ import annotations

from textual.widgets import Button

from console.app.widgets.confirm import ConfirmModal, DialogError
from console.app.widgets.notice_log import NoticeLogScreen
from console.app.widgets.table import DataGrid

from .helpers import confirm_yes, make_app, settle


async def _pane(app, pilot, key: str) -> None:
    await settle(app, pilot)
    await pilot.press(key)
    await settle(app, pilot)


async def test_r_in_the_curator_asks_first_and_n_cancels_aloud(seeded):
    eng, _ = seeded
    before = eng.curator.latest_run()
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await _pane(app, pilot, "5")
        await pilot.press("r")
        await settle(app, pilot)
        modal = app.screen
        assert isinstance(modal, ConfirmModal) and "curator" in modal.title_text.lower()
        assert app.focused is modal.query_one("#confirm", Button)  # the action's button
        await pilot.press("n")
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmModal)
        assert eng.curator.latest_run() == before  # nothing ran
        assert any("Cancelled" in n.message for n in app.notices.newest_first())  # not silent

        await pilot.press("r")
        await settle(app, pilot)
        await confirm_yes(app, pilot)
        await settle(app, pilot)
        after = eng.curator.latest_run()
        assert after is not None and (before is None or after.id != before.id)
    assert app.errors == []


async def test_p_in_search_asks_and_enter_confirms(seeded):
    eng, ids = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("2", "slash", *"deploy fridays", "enter")
        await settle(app, pilot)
        await pilot.press("escape")
        mid = ids["mem"]["fridays"]
        assert app.query_one("#results", DataGrid).selected_key == str(mid)
        was = eng.memories.get(mid).pinned
        await pilot.press("p")
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmModal)
        assert eng.memories.get(mid).pinned == was  # asked, not done
        await pilot.pause(0.45)
        await pilot.press("enter")  # focus is on the action's button: enter confirms
        await settle(app, pilot)
        assert eng.memories.get(mid).pinned != was
    assert app.errors == []


async def test_keys_typed_before_the_dialog_was_seen_never_confirm(lifecycle, monkeypatch):
    # A burst arrives within milliseconds; a loaded test machine takes longer than the real
    # window between two pilot presses, so the window is widened here, not the keys sped up.
    monkeypatch.setattr("console.app.widgets.confirm.ARM_SECONDS", 600.0)
    eng, ids, _ = lifecycle
    rid = ids["rule"]["tests"]
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await _pane(app, pilot, "3")
        table = app.query_one("#rules-table", DataGrid)
        assert table.select_key(rid)
        await settle(app, pilot)
        was = eng.rules.get(rid).pinned
        await pilot.press("p")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ConfirmModal)
        await pilot.press("y", "enter")  # typed on, before the dialog could be read
        await pilot.pause()
        assert app.screen is modal, "keys typed before the dialog was seen closed it"
        assert "press y" in modal.query_one(DialogError).message
        assert eng.rules.get(rid).pinned == was
        modal._armed_at = 0.0  # now it has been seen: y confirms
        await pilot.press("y")
        await settle(app, pilot)
        assert eng.rules.get(rid).pinned != was
    assert app.errors == []


async def test_ctrl_n_shows_every_notice_shown(seeded):
    eng, _ = seeded
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.notify("first [bold]thing[/bold]")
        app.notify("second thing", severity="warning")
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, NoticeLogScreen)
        text = str(screen.query_one("#notices-text").render())
        assert text.index("second thing") < text.index("first [bold]thing[/bold]")  # newest first, no markup
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, NoticeLogScreen)
    assert app.errors == []


async def test_a_served_viewer_is_refused_the_curators_keys(seeded, monkeypatch):
    eng, ids = seeded
    monkeypatch.setenv("MEMCONSOLE_OPERATOR", "bob")
    monkeypatch.setenv("MEMCONSOLE_ROLE", "viewer")
    pending = {r.proposal.id for r in eng.curator.rows(status="pending")}
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await _pane(app, pilot, "5")
        await pilot.press("a")
        await settle(app, pilot)
        assert not isinstance(app.screen, ConfirmModal)  # refused before any dialog
        assert any("needs the curator role" in n.message for n in app.notices.newest_first())
        await app.workers.wait_for_complete()
    assert {r.proposal.id for r in eng.curator.rows(status="pending")} == pending
    refused = [e for e in eng.audit.log(action="refused", limit=5)]
    assert refused and refused[0].actor == "bob" and "curator" in refused[0].reason


async def test_a_served_curator_approves_as_themself(seeded, monkeypatch):
    eng, ids = seeded
    monkeypatch.setenv("MEMCONSOLE_OPERATOR", "alice")
    monkeypatch.setenv("MEMCONSOLE_ROLE", "curator")
    app = make_app(eng)
    async with app.run_test(size=(120, 40)) as pilot:
        await _pane(app, pilot, "5")
        await pilot.press("a")
        await settle(app, pilot)
        await confirm_yes(app, pilot)
    rows = [e for e in eng.audit.log(actor="alice", limit=5) if e.target_kind == "proposal"]
    assert rows and rows[0].actor == "alice"
    assert app.errors == []
