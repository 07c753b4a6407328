"""Snapshots of each pane over the fixed seeded database (FixedClock, HashEmbedder), 120×40,
no cursor blink, no animation. Review the SVG diff before `--snapshot-update`."""

from __future__ import annotations

from .helpers import make_app, press_then, settle

SIZE = (120, 40)


def test_sessions_pane(snap_compare, seeded):
    eng, ids = seeded

    def open_deploy(app):
        app.pane("sessions").show_session("s-deploy", ids["deploy_msgs"][3])

    assert snap_compare(make_app(eng), terminal_size=SIZE, run_before=press_then(after=open_deploy))


def test_search_pane(snap_compare, seeded):
    eng, _ = seeded
    assert snap_compare(
        make_app(eng),
        terminal_size=SIZE,
        run_before=press_then("2", "slash", *"deploy fridays", "enter", "escape"),
    )


def test_curator_pane(snap_compare, seeded):
    eng, ids = seeded

    def pick_merge(app):
        app.query_one("#proposals").select_key(ids["proposals"]["merge"])

    assert snap_compare(make_app(eng), terminal_size=SIZE, run_before=press_then("5", after=pick_merge))


def test_forget_audit_pane(snap_compare, seeded):
    eng, ids = seeded

    def prefill(app):
        app.start_forget(memory_id=ids["mem"]["ticket"])

    keys = (*"rollback policy changed", "enter")
    assert snap_compare(make_app(eng), terminal_size=SIZE, run_before=_two_step(prefill, keys))


def _two_step(first, keys):
    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(app, pilot)
        first(app)
        await settle(app, pilot)
        for k in keys:
            await pilot.press(k)
        await settle(app, pilot)

    return run_before


def test_help_screen(snap_compare, seeded):
    eng, _ = seeded
    assert snap_compare(make_app(eng), terminal_size=SIZE, run_before=press_then("question_mark"))
