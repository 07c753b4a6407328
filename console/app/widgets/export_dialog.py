"""`ctrl+e`: where to export a table view, and as what (CSV or JSON). The path is checked here, so a
bad one shows its one-line reason inline and the dialog stays open; an existing file is replaced
only after a confirmation that names it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

from console.shared.table_export import FORMATS, ExportExists, Format
from console.shared.text_safety import visible
from engine.errors import InvalidInput, cut_line

from .confirm import ConfirmModal, DialogError
from .safe import SafeStatic

Resolver = Callable[[str, Format], Path]


@dataclass(frozen=True)
class ExportChoice:
    path: Path
    format: Format
    overwrite: bool = False


def _format_of(text: str, chosen: Format) -> Format:
    """A name ending in .csv / .json picks that format; otherwise the one chosen."""
    low = text.strip().lower()
    return next((f for f in FORMATS if low.endswith("." + f)), chosen)


class ExportDialog(ModalScreen[ExportChoice | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="export.cancel")]
    DEFAULT_CSS = """
    ExportDialog { align: center middle; }
    ExportDialog > Vertical {
        width: 76; max-width: 100%; height: auto; max-height: 90%; padding: 1 2;
        border: thick $accent; background: $surface;
    }
    ExportDialog #export-title { text-style: bold; margin-bottom: 1; }
    ExportDialog #export-warning { color: $warning; margin-bottom: 1; }
    ExportDialog #export-where { color: $text-muted; }
    ExportDialog Horizontal { height: auto; align-horizontal: right; margin-top: 1; }
    ExportDialog Button { margin-left: 2; }
    """

    def __init__(
        self, title: str, default: str, resolve: Resolver, *, where: str = "", warning: str | None = None
    ) -> None:
        super().__init__()
        self.title_text = title
        self.default = default
        self.resolve = resolve
        self.where = where
        self.warning = warning

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(visible(self.title_text), id="export-title", markup=False)
            if self.warning:
                yield SafeStatic(self.warning, id="export-warning")
            yield Label(visible(f"File ({self.where}):"), id="export-where", markup=False)
            yield Input(value=self.default, id="export-path")
            yield Select(
                [("CSV", "csv"), ("JSON", "json")], value="csv", allow_blank=False, id="export-format"
            )
            yield DialogError(id="export-error")
            with Horizontal():
                yield Button("Cancel", id="export-cancel")
                yield Button("Export", id="export-ok", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    @property
    def chosen_format(self) -> Format:
        value = self.query_one("#export-format", Select).value
        return "json" if value == "json" else "csv"

    @on(Select.Changed, "#export-format")
    def _format_changed(self) -> None:
        """Keep the file's suffix in step with the chosen format."""
        inp = self.query_one("#export-path", Input)
        fmt = self.chosen_format
        for f in FORMATS:
            if f != fmt and inp.value.lower().endswith("." + f):
                inp.value = inp.value[: -len(f)] + fmt
        self.query_one(DialogError).show("")

    @on(Input.Changed, "#export-path")
    def _typed(self) -> None:
        self.query_one(DialogError).show("")

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-ok")
    def submit(self) -> None:
        text = self.query_one("#export-path", Input).value
        fmt = _format_of(text, self.chosen_format)
        try:
            path = self.resolve(text, fmt)
        except ExportExists as e:
            existing = e.path

            def answered(ok: bool | None) -> None:
                if ok:
                    self.dismiss(ExportChoice(existing, fmt, overwrite=True))

            self.app.push_screen(
                ConfirmModal(
                    "Replace an existing file?",
                    f"{existing} exists. Export replaces it with this view ({fmt}).",
                    confirm_label="Replace",
                ),
                answered,
            )
            return
        except InvalidInput as e:  # the dialog stays open with the one-line reason
            self.query_one(DialogError).show(cut_line(str(e), 200))
            return
        except OSError as e:  # e.g. the served export folder cannot be made
            self.query_one(DialogError).show(f"export: {cut_line(str(e.strerror or e), 200)}")
            return
        self.dismiss(ExportChoice(path, fmt))

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.app.notify("Export cancelled: nothing was written.", timeout=2)
        self.dismiss(None)
