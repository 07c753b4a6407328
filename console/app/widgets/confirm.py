"""The one confirmation for consequential actions: it states exactly what will change and, for
the irreversible ones, asks the operator to type a word (FORGET) before it enables Confirm.
Dialogs never close on invalid input: the error shows inline (`.dialog-error`, one style for every
dialog) and the dialog stays open until the input is right or the operator cancels.

Every line of a dialog wraps to its width, never cut (a long title, question or button text at 80
columns), and a body taller than the terminal scrolls inside the dialog while the title, the keys
and the buttons stay on screen (#27: at 80×24 a long body used to push the buttons off it)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

from console.shared.text_safety import visible
from engine.errors import cut

from .safe import SafeStatic

Validator = Callable[[str], "str | None"]  # the text -> an error to show, or None when it is fine

ERROR_CSS = "margin-top: 1; color: $error; text-style: bold;"


def number_between(lo: float, hi: float, what: str = "value") -> Validator:
    """A validator: a finite number in [lo, hi]."""

    def check(text: str) -> str | None:
        try:
            v = float(text.strip())
        except ValueError:
            return f"{what} must be a number between {lo:g} and {hi:g}, not {cut(text.strip())}"
        if not math.isfinite(v) or not lo <= v <= hi:
            return f"{what} must be between {lo:g} and {hi:g}"
        return None

    return check


def required(what: str = "a reason") -> Validator:
    """A validator: some non-blank text."""
    return lambda text: None if text.strip() else f"{what} is required"


class DialogError(SafeStatic):
    """The inline error of a dialog (hidden while empty)."""

    DEFAULT_CSS = f"""
    DialogError {{ {ERROR_CSS} height: auto; }}
    DialogError.-empty {{ display: none; }}
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", classes="dialog-error -empty", **kwargs)
        self.message = ""

    def show(self, message: str) -> None:
        self.message = message
        self.update(message)
        self.set_class(not message, "-empty")


class ConfirmButton(Button):
    """The action's button: it has focus when the dialog opens, so `enter` confirms (never a
    silent cancel); a key press arriving before the dialog is armed does nothing but say so."""

    def action_press(self) -> None:
        screen = self.screen
        if isinstance(screen, ConfirmModal) and not screen.armed():
            screen.too_soon()
            return
        super().action_press()


# Keys arriving this soon after the dialog opened were typed before it was seen (a burst meant for an
# input that lost focus): they never confirm. A mouse click is never that fast by accident.
ARM_SECONDS = 0.4


class ConfirmModal(ModalScreen[bool]):
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="confirm.cancel"),
        Binding("y", "yes", "Yes", id="confirm.yes"),
        Binding("n", "no", "No", id="confirm.no"),
    ]
    DEFAULT_CSS = """
    ConfirmModal { align: center middle; }
    ConfirmModal > Vertical {
        width: 76; height: auto; max-height: 90%; padding: 1 2;
        border: thick $warning; background: $surface;
    }
    ConfirmModal Label { width: 100%; height: auto; }  /* a Label is as wide as its text: cut */
    ConfirmModal #confirm-title { text-style: bold; margin-bottom: 1; }
    ConfirmModal #confirm-scroll { height: auto; }
    ConfirmModal #confirm-body { margin-bottom: 1; }
    ConfirmModal #confirm-keys { color: $text-muted; margin-bottom: 1; }
    ConfirmModal Horizontal { height: auto; align-horizontal: right; }
    ConfirmModal Button { margin-left: 2; }
    """

    def __init__(
        self,
        title: str,
        body: str,
        *,
        confirm_label: str = "Confirm",
        require_text: str | None = None,
        danger: bool = False,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.confirm_label = confirm_label
        self.require_text = require_text
        self.danger = danger
        self._armed_at = time.monotonic() + ARM_SECONDS  # again when shown (on_mount)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(visible(self.title_text), id="confirm-title", markup=False)
            with VerticalScroll(id="confirm-scroll"):  # tab focuses it: arrows scroll a long body
                yield SafeStatic(self.body, id="confirm-body")
            if self.require_text:
                yield Label(f"Type {self.require_text} to confirm:")
                yield Input(placeholder=self.require_text, id="confirm-text")
            yield DialogError(id="confirm-error")
            yield Label(
                "y or enter: " + visible(self.confirm_label) + " · n or escape: cancel",
                id="confirm-keys",
                markup=False,
            )
            with Horizontal():
                yield Button("Cancel", id="cancel")
                yield ConfirmButton(
                    self.confirm_label,
                    id="confirm",
                    variant="error" if self.danger else "warning",
                    disabled=bool(self.require_text),
                )

    def _error(self, message: str) -> None:
        self.query_one(DialogError).show(message)
        self.call_after_refresh(self._fit_body)  # a shown error takes rows: the body gives them

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_body)

    def _fit_body(self) -> None:
        """The body gets the rows the rest of the dialog leaves on this screen (it scrolls past
        them), so the buttons are never pushed below the terminal's last row."""
        found = self.query("#confirm-scroll")
        if not found or not isinstance(box := found.first().parent, Vertical):
            return  # a subclass with its own layout (the curator's PlanConfirm)
        scroll = found.first()
        rest = sum(
            w.outer_size.height + w.styles.margin.height
            for w in box.children
            if w is not scroll and w.display
        )
        chrome = box.styles.gutter.height  # its border and padding
        room = int(self.size.height * 0.9) - chrome - rest
        scroll.styles.max_height = max(3, room)

    def on_mount(self) -> None:
        self._armed_at = time.monotonic() + ARM_SECONDS
        if self.require_text:
            self.query_one("#confirm-text", Input).focus()
        else:  # the action's button: enter confirms, it never cancels silently
            self.query_one("#confirm", Button).focus()

    def armed(self) -> bool:
        return time.monotonic() >= self._armed_at

    def too_soon(self) -> None:
        self._error("Read first: press y (or enter) again to confirm; n cancels.")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # y and n are text while the typed-word input has focus.
        return not (action in ("yes", "no") and isinstance(self.focused, Input))

    def action_yes(self) -> None:
        """`y`: confirm, as the button would (not while a required word is untyped)."""
        if self.query_one("#confirm", Button).disabled:
            self._error(f"Type {self.require_text} first (escape cancels).")
            return
        if not self.armed():
            self.too_soon()
            return
        self.dismiss(True)

    @on(Input.Changed, "#confirm-text")
    def _typed(self, event: Input.Changed) -> None:
        self.query_one("#confirm", Button).disabled = event.value.strip() != self.require_text
        self._error("")

    @on(Input.Submitted, "#confirm-text")
    def _submitted(self, event: Input.Submitted) -> None:
        if event.value.strip() == self.require_text:
            self.dismiss(True)
        else:  # the wrong word: say so and stay open
            self._error(f"Type {self.require_text} exactly to confirm (escape cancels); nothing was changed.")

    @on(Button.Pressed, "#confirm")
    def _confirm(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.app.notify(f"Cancelled: {visible(self.title_text)} Nothing was changed.", timeout=3)
        self.dismiss(False)


class PromptModal(ModalScreen[str | None]):
    """Ask for one value (importance, a reason); None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]
    DEFAULT_CSS = """
    PromptModal { align: center middle; }
    PromptModal > Vertical {
        width: 70; height: auto; padding: 1 2; border: thick $accent; background: $surface;
    }
    PromptModal Label { width: 100%; height: auto; margin-bottom: 1; }
    """

    def __init__(
        self, question: str, value: str = "", placeholder: str = "", *, validate: Validator | None = None
    ) -> None:
        super().__init__()
        self.question = question
        self.value = value
        self.placeholder = placeholder
        self.validate = validate

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(visible(self.question), markup=False)
            yield Input(value=self.value, placeholder=self.placeholder, id="prompt-input")
            yield DialogError(id="prompt-error")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Changed)
    def _typed(self) -> None:
        self.query_one(DialogError).show("")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        error = self.validate(event.value) if self.validate else None
        if error:  # invalid: the dialog stays open with the reason, the text kept for a fix
            self.query_one(DialogError).show(error)
            return
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
