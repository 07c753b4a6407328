"""A full-screen Markdown report (the curator's run report), closed with escape."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from console.shared.text_safety import visible


class ReportScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "close", "Close", id="report.close")]
    DEFAULT_CSS = """
    ReportScreen { align: center middle; }
    ReportScreen > VerticalScroll { width: 90%; height: 90%; border: thick $accent; background: $surface; }
    """

    def __init__(self, title: str, markdown: str) -> None:
        super().__init__()
        self.title_text = title
        self.markdown = visible(markdown)  # the report quotes memories: controls spelled out

    def compose(self) -> ComposeResult:
        with VerticalScroll() as v:
            v.border_title = self.title_text
            yield Markdown(self.markdown)

    def action_close(self) -> None:
        self.dismiss(None)
