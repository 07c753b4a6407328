"""The full-row view: every field of a table's selected row, wrapped, escaped (`enter` / `v` in a
table; `escape` closes). A table cell is cut to its column; this shows all of it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen

from .safe import SafeStatic


class RowView(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,v,enter", "close", "Close", id="rowview.close")]
    DEFAULT_CSS = """
    RowView { align: center middle; }
    RowView > VerticalScroll {
        width: 90%; max-width: 140; height: auto; max-height: 90%; padding: 0 2;
        border: thick $accent; background: $surface;
    }
    RowView .rowview-label { text-style: bold; color: $accent; margin-top: 1; }
    RowView .rowview-value { width: 1fr; }
    RowView #rowview-hint { color: $text-muted; margin: 1 0 0 0; }
    """

    def __init__(self, title: str, fields: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.fields = fields  # (label, full value): tests read them

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="rowview"):
            for label, value in self.fields:
                yield SafeStatic(label, classes="rowview-label")
                yield SafeStatic(Text(value or "–"), classes="rowview-value")
            yield SafeStatic("escape closes", id="rowview-hint")

    def on_mount(self) -> None:
        box = self.query_one("#rowview", VerticalScroll)
        box.border_title = self.title_text
        box.focus()

    def action_close(self) -> None:
        self.dismiss(None)
