"""#27 "dialog and why-not text wraps instead of being cut": at 80×24 every line of a dialog (title,
question, body, error, keys) wraps inside the dialog, and a body taller than the terminal scrolls
inside it while the title and the buttons stay on screen. Pilot over a bare App (no database)."""

from __future__ import annotations

from textual.app import App
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Label, Static

from console.app.widgets.confirm import ConfirmModal, PromptModal
from console.app.widgets.notice_log import Notice, NoticeLogScreen
from screens.rules.add import AddRuleModal

SIZE = (80, 24)
TITLE = "Approve merging memories #12, #13 and #14 into the one whose wording survives, exactly as shown?"
BODY = "\n".join(
    f"member {i}: " + "deploys need a change ticket and a second reviewer " * 3 for i in range(14)
)
QUESTION = "Why not which memory for recall #123456, whose query asked about deploying on fridays, weekends?"
LONG_ERROR = (
    "a memory id is a whole number between 1 and the newest memory's id; this one is not: " + "9" * 40
)


def _inside(w: Widget, box: Widget) -> bool:
    r, c = w.region, box.content_region
    return c.x <= r.x and r.right <= c.right


def assert_nothing_cut(screen: Screen) -> None:
    """Every label and text is no wider than the box it sits in (so it wrapped), and every button
    is whole on the screen."""
    for w in screen.query("Label, Static"):
        if not w.display or w.region.area == 0 or isinstance(w.parent, VerticalScroll):
            continue
        assert w.parent is not None and _inside(w, w.parent), f"{w!r} is cut: {w.region} in {w.parent.region}"
    for b in screen.query(Button):
        r = b.region
        assert r.height == 3 and r.y >= 0 and r.bottom <= SIZE[1] and r.right <= SIZE[0], f"{b!r} cut: {r}"


def _text(screen: Screen, selector: str) -> str:
    w = screen.query_one(selector, Static)
    return "\n".join(line.text for line in w.render_lines(w.content_region.reset_offset))


async def test_a_long_confirmation_wraps_and_scrolls_with_its_buttons_on_screen():
    app = App()
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(ConfirmModal(TITLE, BODY, confirm_label="Approve and merge the three members"))
        await pilot.pause()
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ConfirmModal)
        title = modal.query_one("#confirm-title", Label)
        assert title.region.height >= 2  # wrapped onto a second line, not cut at the border
        assert "exactly as shown?" in _text(modal, "#confirm-title").replace("\n", " ")
        scroll = modal.query_one("#confirm-scroll", VerticalScroll)
        assert scroll.max_scroll_y > 0  # the body scrolls inside the dialog
        assert_nothing_cut(modal)
        assert modal.focused is modal.query_one("#confirm", Button)  # enter still confirms
        await pilot.press("tab")  # focus can reach the body: arrows scroll it
        assert modal.focused is scroll
        await pilot.press("end")
        assert scroll.scroll_y == scroll.max_scroll_y > 0


async def test_a_typed_word_dialog_keeps_its_buttons_when_an_error_shows():
    app = App()
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(ConfirmModal(TITLE, BODY, confirm_label="Forget", require_text="FORGET", danger=True))
        await pilot.pause()
        await pilot.press(*"FORGOT", "enter")  # the wrong word: an error line appears
        await pilot.pause()
        await pilot.pause()
        assert "exactly" in app.screen.query_one("#confirm-error").message
        assert_nothing_cut(app.screen)


async def test_a_long_prompt_and_its_error_wrap():
    app = App()
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(PromptModal(QUESTION, validate=lambda _t: LONG_ERROR))
        await pilot.pause()
        await pilot.press("x", "enter")
        await pilot.pause()
        label = app.screen.query_one(Label)
        assert label.region.height >= 2 and "weekends?" in _text(app.screen, "Label").replace("\n", " ")
        assert_nothing_cut(app.screen)


async def test_other_dialogs_wrap_at_80_columns():
    app = App()
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(AddRuleModal())
        await pilot.pause()
        app.screen.query_one("#rule-add-error").show(LONG_ERROR)
        await pilot.pause()
        assert_nothing_cut(app.screen)
        app.pop_screen()
        app.push_screen(NoticeLogScreen([Notice(0.0, "warning", LONG_ERROR + " " + TITLE)]))
        await pilot.pause()
        assert_nothing_cut(app.screen)
        assert "99999" in _text(app.screen, "#notices-text")
