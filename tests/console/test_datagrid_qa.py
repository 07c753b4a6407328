"""QA regressions for the shared DataGrid: cells are data (never markup), and columns show their
full content even when a frame was drawn before the table sized its columns."""

import html
import re

from rich.text import Text
from textual.app import App

from console.app.widgets.table import DataGrid


class GridApp(App):
    def compose(self):
        yield DataGrid(id="g")

    def on_mount(self) -> None:
        self.query_one(DataGrid).add_columns("id", "status", "rule", "agent")


def _lines(app) -> str:
    """What the terminal shows (the screenshot's text runs, in order)."""
    svg = app.export_screenshot()
    return "\n".join(
        html.unescape(t).replace("\xa0", " ") for t in re.findall(r"<text[^>]*>(.*?)</text>", svg)
    )


async def test_markup_in_cells_is_shown_literally_and_never_crashes():
    app = GridApp()
    async with app.run_test(size=(120, 12)) as pilot:
        g = app.query_one(DataGrid)
        g.set_rows([(1, [1, "active", "closing tag [/bold] and [red]not red[/red]", "[/a]"])])
        await pilot.pause()
        text = _lines(app)
        assert "closing tag [/bold] and [red]not red[/red]" in text
        assert "[/a]" in text
        g.action_copy_row()
        assert g.last_copied == "1\tactive\tclosing tag [/bold] and [red]not red[/red]\t[/a]"


async def test_rows_drawn_before_the_idle_pass_are_not_left_clipped():
    app = GridApp()
    async with app.run_test(size=(120, 16)) as pilot:
        g = app.query_one(DataGrid)
        rows = [
            (i, [i, Text("critical"), f"Never force-push to main {i}", "hermes-trader"]) for i in range(8)
        ]
        g.set_rows(rows)
        for y in range(6):  # a frame drawn before DataTable's idle pass sizes the columns
            g.render_line(y)
        await pilot.pause()
        await pilot.pause()
        text = _lines(app)
        for i in range(8):
            assert f"Never force-push to main {i}" in text, text
        assert text.count("hermes-trader") == 8
