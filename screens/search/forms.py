"""The Search pane's dialogs for writing a memory: add one (content, kind, category, agent,
importance) or edit one's text. Checked with the engine's own rules (engine.memory_input, nothing
written) before they close: an invalid field shows inline and the dialog stays open."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

from console.app.widgets.safe import SafeStatic as Static
from engine.errors import InvalidInput
from engine.memory_input import normalize_item
from engine.types import CATEGORIES, KINDS


class MemoryForm(ModalScreen["dict[str, Any] | None"]):
    """New memory (`content=None`) or a memory's new text (`content` = its text now). Returns the
    fields ({"content", and for a new one "kind", "category", "agent", "importance"}) or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="memform.cancel")]
    DEFAULT_CSS = """
    MemoryForm { align: center middle; }
    MemoryForm > Vertical {
        width: 90; max-width: 100%; height: auto; padding: 1 2; border: thick $accent; background: $surface;
    }
    MemoryForm .row { height: auto; }
    MemoryForm Select { width: 1fr; }
    MemoryForm #mf-agent, MemoryForm #mf-importance { width: 1fr; }
    MemoryForm #mf-error { color: $error; text-style: bold; height: auto; }
    MemoryForm Horizontal.buttons { height: auto; align-horizontal: right; margin-top: 1; }
    """

    def __init__(self, title: str, content: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.editing = content is not None
        self.initial = content or ""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.title_text, classes="title")
            yield Label("content")
            yield Input(value=self.initial, placeholder="what to remember", id="mf-content")
            if not self.editing:
                with Horizontal(classes="row"):
                    yield Select([(k, k) for k in KINDS], value="semantic", allow_blank=False, id="mf-kind")
                    yield Select(
                        [(c, c) for c in CATEGORIES], value="general", allow_blank=False, id="mf-category"
                    )
                with Horizontal(classes="row"):
                    yield Input(placeholder="agent (blank: none)", id="mf-agent")
                    yield Input(value="0.5", placeholder="importance 0–1", id="mf-importance")
            yield Static("", id="mf-error")
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="mf-cancel")
                yield Button("Save", variant="primary", id="mf-save")

    def on_mount(self) -> None:
        self.query_one("#mf-content", Input).focus()

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"content": self.query_one("#mf-content", Input).value}
        if not self.editing:
            out["kind"] = self.query_one("#mf-kind", Select).value
            out["category"] = self.query_one("#mf-category", Select).value
            out["agent"] = self.query_one("#mf-agent", Input).value.strip()
            out["importance"] = self.query_one("#mf-importance", Input).value.strip()
        return out

    def error(self) -> str | None:
        """The first field the engine would refuse, in its words; None when all are fine."""
        f = self.fields()
        if self.editing and f["content"] == self.initial:
            return "the text is unchanged"
        try:
            normalize_item(f)
        except InvalidInput as exc:
            return str(exc)
        return None

    @on(Input.Changed)
    def _typed(self) -> None:
        self.query_one("#mf-error", Static).update("")

    @on(Input.Submitted)
    @on(Button.Pressed, "#mf-save")
    def _save(self) -> None:
        if err := self.error():  # stays open; the text is kept for a fix
            self.query_one("#mf-error", Static).update(err)
            return
        f = self.fields()
        if "importance" in f:
            f["importance"] = float(f["importance"])
        self.dismiss(f)

    @on(Button.Pressed, "#mf-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
