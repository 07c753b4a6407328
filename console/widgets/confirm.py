"""The one confirmation for consequential actions: it states exactly what will change and, for
the irreversible ones, asks the operator to type a word (FORGET) before it enables Confirm."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

from console.text_safety import visible

from .safe import SafeStatic


class ConfirmModal(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="confirm.cancel")]
    DEFAULT_CSS = """
    ConfirmModal { align: center middle; }
    ConfirmModal > Vertical {
        width: 76; height: auto; max-height: 90%; padding: 1 2;
        border: thick $warning; background: $surface;
    }
    ConfirmModal #confirm-title { text-style: bold; margin-bottom: 1; }
    ConfirmModal #confirm-body { margin-bottom: 1; }
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

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(visible(self.title_text), id="confirm-title", markup=False)
            yield SafeStatic(self.body, id="confirm-body")
            if self.require_text:
                yield Label(f"Type {self.require_text} to confirm:")
                yield Input(placeholder=self.require_text, id="confirm-text")
            with Horizontal():
                yield Button("Cancel", id="cancel")
                yield Button(
                    self.confirm_label,
                    id="confirm",
                    variant="error" if self.danger else "warning",
                    disabled=bool(self.require_text),
                )

    def on_mount(self) -> None:
        if self.require_text:
            self.query_one("#confirm-text", Input).focus()
        else:
            self.query_one("#cancel", Button).focus()

    @on(Input.Changed, "#confirm-text")
    def _typed(self, event: Input.Changed) -> None:
        self.query_one("#confirm", Button).disabled = event.value.strip() != self.require_text

    @on(Input.Submitted, "#confirm-text")
    def _submitted(self, event: Input.Submitted) -> None:
        if event.value.strip() == self.require_text:
            self.dismiss(True)

    @on(Button.Pressed, "#confirm")
    def _confirm(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)


class PromptModal(ModalScreen[str | None]):
    """Ask for one value (importance, a reason); None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="prompt.cancel")]
    DEFAULT_CSS = """
    PromptModal { align: center middle; }
    PromptModal > Vertical {
        width: 70; height: auto; padding: 1 2; border: thick $accent; background: $surface;
    }
    PromptModal Label { margin-bottom: 1; }
    """

    def __init__(self, question: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.question = question
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(visible(self.question), markup=False)
            yield Input(value=self.value, placeholder=self.placeholder, id="prompt-input")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
