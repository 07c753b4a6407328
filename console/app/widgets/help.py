"""`?`: every binding of the console, grouped by where it applies."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def _key(b: Binding) -> str:
    return ", ".join(k.strip() for k in b.key.split(","))


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss_help", "Close", id="help.close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90; max-width: 100%; height: 90%; border: thick $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, sections: list[tuple[str, list[Binding]]], keymap: dict | None = None) -> None:
        super().__init__()
        self.keymap = keymap or {}
        self.sections = sections
        self.entries = [
            (title, self._keys(b), b.description or b.action)
            for title, bindings in sections
            for b in bindings
        ]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            for title, bindings in self.sections:
                t = Table(
                    title=title,
                    title_justify="left",
                    show_header=False,
                    box=None,
                    expand=False,
                    padding=(0, 1),
                    title_style="bold",
                )
                t.add_column("key", style="bold cyan", width=12)  # 80 columns keep the binding ids
                t.add_column("what")
                t.add_column("id (remap in config.toml [keymap])", style="dim")
                for b in bindings:
                    t.add_row(self._display(b), b.description or b.action, b.id or "")
                yield Static(t, classes="help-section")

    def _keys(self, b: Binding) -> str:
        return self.keymap.get(b.id, _key(b)) if b.id else _key(b)

    def _display(self, b: Binding) -> str:
        if b.id and b.id in self.keymap:
            return self.keymap[b.id]
        try:
            return self.app.get_key_display(b)
        except Exception:
            return _key(b)

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
