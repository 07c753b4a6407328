"""DataGrid: the one table every pane uses — vim keys, `y` copies, and a refresh that keeps the
operator's selection and scroll position when the data changes underneath."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from console.text_safety import visible

from .safe import safe_text


class PlainCell(Text):
    """A str cell shown literally; it still equals its str, as the cell value did before.
    (Defining __eq__ leaves it unhashable, like Text.)"""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.plain == other
        return super().__eq__(other)


class DataGrid(DataTable):
    """A row-cursor DataTable with j/k/g/G and y (cell) / Y (row) copy."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="table.down"),
        Binding("k", "cursor_up", "Up", show=False, id="table.up"),
        Binding("g", "scroll_top", "Top", show=False, id="table.top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="table.bottom"),
        Binding("y", "copy_cell", "Copy cell", id="table.copy_cell"),
        Binding("Y", "copy_row", "Copy row", show=False, id="table.copy_row"),
    ]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(*args, **kwargs)
        self.last_copied: str | None = None

    def add_row(self, *cells: Any, **kwargs: Any):
        """Cells are data, never markup: DataTable would parse a str with Text.from_markup, so a
        memory holding "[/bold]" crashed the console and "[x]" vanished from the cell. Control
        characters are spelled out (safe_renderable): a stored ESC never reaches the terminal."""
        return super().add_row(
            *(
                PlainCell(visible(c), end="")
                if isinstance(c, str)
                else safe_text(c)
                if isinstance(c, Text)
                else c
                for c in cells
            ),
            **kwargs,
        )

    def _update_dimensions(self, new_rows) -> None:
        """Textual caches rendered cells by row/column, not by width: a frame drawn between
        add_row and the idle pass that sizes the columns kept cells clipped to the header width
        ("Neve" for "Never force-push…") until each row was redrawn. Drop those cells when the
        widths change."""
        before = [c.content_width for c in self.columns.values()]
        super()._update_dimensions(new_rows)
        if [c.content_width for c in self.columns.values()] != before:
            self._clear_caches()
            self.refresh()

    # -- selection -------------------------------------------------------------------------------
    @property
    def selected_key(self) -> str | None:
        """The key of the row under the cursor (None when the table is empty)."""
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:
            return None

    def select_key(self, key: str | int) -> bool:
        """Move the cursor to the row with `key`; False if there is no such row."""
        try:
            idx = self.get_row_index(str(key))
        except Exception:
            return False
        self.move_cursor(row=idx, animate=False)
        return True

    # -- data ------------------------------------------------------------------------------------
    def set_rows(self, rows: Iterable[tuple[str | int, Sequence[Any]]]) -> None:
        """Replace every row, keeping the cursor on the same key (or index) and the scroll."""
        old_key, old_row = self.selected_key, self.cursor_row
        sx, sy = self.scroll_x, self.scroll_y
        keys: list[str] = []
        # Rebuilding moves the cursor through row 0: keep those moves from reaching the pane.
        with self.prevent(DataTable.RowHighlighted, DataTable.CellHighlighted):
            self.clear()
            for key, cells in rows:
                k = str(key)
                if k in keys:  # a duplicate key would raise; the first row wins
                    continue
                keys.append(k)
                self.add_row(*cells, key=k)
            if keys:
                idx = keys.index(old_key) if old_key in keys else min(max(old_row, 0), len(keys) - 1)
                self.move_cursor(row=idx, animate=False, scroll=False)
        if not keys:
            return
        if self.selected_key != old_key:  # a different row is under the cursor now: say so
            self.post_message(
                DataTable.RowHighlighted(
                    self, self.cursor_row, self.coordinate_to_cell_key(self.cursor_coordinate).row_key
                )
            )
        self.call_after_refresh(self.scroll_to, sx, sy, animate=False)

    # -- copying -----------------------------------------------------------------------------------
    def _copy(self, text: str, what: str) -> None:
        self.last_copied = text
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {what} ({len(text)} chars)", timeout=2)

    def action_copy_cell(self) -> None:
        if not self.row_count:
            return
        self._copy(_plain(self.get_cell_at(self.cursor_coordinate)), "cell")

    def action_copy_row(self) -> None:
        if not self.row_count:
            return
        cells = self.get_row_at(self.cursor_row)
        self._copy("\t".join(_plain(c) for c in cells), "row")


def _plain(value: Any) -> str:
    plain = getattr(value, "plain", None)
    return plain if isinstance(plain, str) else ("" if value is None else str(value))
