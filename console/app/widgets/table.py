"""DataGrid: the one table every pane uses — vim keys, `y` copies, `enter` / `v` open the full
row, one flexible column takes the free width, and a refresh that keeps the operator's selection
and scroll position when the data changes underneath (or puts the cursor on the first row after
a new filter)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.widgets import DataTable

from console.shared.text_safety import visible

from .rowview import RowView
from .safe import safe_text
from .table_tools import TABLE_TOOL_BINDINGS, TableTools

FLEX_MIN = 12  # the flexible column never gets narrower than this


class PlainCell(Text):
    """A str cell shown literally; it still equals its str, as the cell value did before.
    (Defining __eq__ leaves it unhashable, like Text.)"""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.plain == other
        return super().__eq__(other)


class DataGrid(TableTools, DataTable):
    """A row-cursor DataTable with j/k/g/G, y (cell) / Y (row) copy and the full-row view.

    `flex_column`: the label (or key) of the column that takes the terminal's free width (the
    content, title or summary); pass it to the constructor or set it before rows arrive. Give that
    column the whole text: the table cuts it to the width (with …) and `enter` / `v` show it all.
    `enter_selects=True` keeps DataTable's `enter` (post RowSelected) for a table that opens
    something on enter; `v` still opens the row. `v` yields to a pane's own `v` binding."""

    BINDINGS = [
        Binding("enter", "view_row", "Full row", show=False, id="table.view_row"),
        Binding("v", "view_row_v", "Full row", show=False, id="table.view_row_v"),
        Binding("j", "cursor_down", "Down", show=False, id="table.down"),
        Binding("k", "cursor_up", "Up", show=False, id="table.up"),
        Binding("g", "scroll_top", "Top", show=False, id="table.top"),
        Binding("G", "scroll_bottom", "Bottom", show=False, id="table.bottom"),
        Binding("y", "copy_cell", "Copy cell", id="table.copy_cell"),
        Binding("Y", "copy_row", "Copy row", show=False, id="table.copy_row"),
        *TABLE_TOOL_BINDINGS,  # s/S sort, ctrl+e export (table_tools.py)
    ]

    def __init__(
        self,
        *args: Any,
        flex_column: str | None = None,
        flex_min: int = FLEX_MIN,
        enter_selects: bool = False,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(*args, **kwargs)
        self.last_copied: str | None = None
        self.flex_column = flex_column
        self.flex_min = flex_min  # a name column (flows) keeps more of itself when space is short
        self.enter_selects = enter_selects
        self.cursor_to_top = False  # a new filter: the next set_rows starts at the first row

    def add_row(self, *cells: Any, **kwargs: Any):
        """Cells are data, never markup: DataTable would parse a str with Text.from_markup, so a
        memory holding "[/bold]" crashed the console and "[x]" vanished from the cell. Control
        characters are spelled out (safe_renderable): a stored ESC never reaches the terminal."""
        return super().add_row(
            *(
                PlainCell(visible(c), end="", overflow="ellipsis")
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
        flexed = self._flex()  # the others' widths moved: the flexible column takes the rest
        if [c.content_width for c in self.columns.values()] != before or flexed:
            self._clear_caches()
            self.refresh()

    # -- the flexible column -----------------------------------------------------------------------
    def _flex_col(self):
        if not self.flex_column:
            return None
        for col in self.columns.values():
            if col.key.value == self.flex_column or col.label.plain == self.flex_column:
                return col
        return None

    def _flex(self) -> bool:
        """Give the flexible column the width the others leave free; True when it changed."""
        col = self._flex_col()
        region, bar = self.scrollable_content_region, self.styles.scrollbar_size_vertical
        width = region.width + (bar if self.show_vertical_scrollbar else 0)
        if self.virtual_size.height > self.size.height - self.styles.gutter.height:
            width -= bar  # rows overflow: the vertical scrollbar takes its columns
        if col is None or width <= 0:
            return False
        pad = 2 * self.cell_padding
        others = sum(c.get_render_width(self) for c in self.columns.values() if c is not col)
        if self.show_row_labels and self._labelled_row_exists:
            others += self._label_column.get_render_width(self)
        w = max(self.flex_min, width - others - pad)
        if not col.auto_width and col.width == w:
            return False
        col.auto_width, col.width = False, w
        total = others + w + pad
        self.virtual_size = Size(total, self.virtual_size.height)
        return True

    def _on_resize(self, event: events.Resize) -> None:
        super()._on_resize(event)
        if self._flex():
            self._clear_caches()

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
        if self.cursor_to_top:  # a new filter: its first row, not the old position
            self.cursor_to_top = False
            old_key, old_row, sy = None, 0, 0
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
            self.remember_data_order(keys)
            self.apply_sort(keep_cursor=False)  # the operator's sort outlives a refresh
            if keys:
                idx = self.get_row_index(old_key) if old_key in keys else min(max(old_row, 0), len(keys) - 1)
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

    # -- the full row -------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.tool_allowed(action):  # a pane's own s / S / o / O wins
            return False
        if action == "view_row_v":  # a pane that binds `v` itself keeps it
            return not any(
                isinstance(b, Binding) and "v" in b.key.split(",")
                for node in self.ancestors_with_self[1:]
                for b in getattr(node, "BINDINGS", [])
            )
        return True

    def row_fields(self) -> list[tuple[str, str]]:
        """(column label, whole cell text) of the selected row."""
        if not self.row_count:
            return []
        cells = self.get_row_at(self.cursor_row)
        return [(c.label.plain, _plain(v)) for c, v in zip(self.ordered_columns, cells, strict=False)]

    def action_view_row(self) -> None:
        if self.enter_selects:  # this table opens something on enter: DataTable's own enter
            self.action_select_cursor()
            return
        self._view_row()

    def action_view_row_v(self) -> None:
        self._view_row()

    def _view_row(self) -> None:
        if not self.row_count:
            self.notify("No row to show.", timeout=2)
            return
        title = _plain(self.border_title) or self.id or "row"
        self.app.push_screen(RowView(f"{title} · row {self.cursor_row + 1}", self.row_fields()))

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
