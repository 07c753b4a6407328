"""The console as tests drive it."""

from __future__ import annotations

import contextlib

from textual.widgets import Input
from textual.worker import WorkerCancelled

from console.app import MemConsole


class QuietConsole(MemConsole):
    """No polling timer, no model loading, no blinking cursor, a fixed header label (so
    snapshots do not depend on tmp paths). Tests call app.poll_db() themselves."""

    def __init__(self, engine, **kw) -> None:
        kw.setdefault("poll_interval", None)
        kw.setdefault("start_embedder", False)
        kw.setdefault("db_label", "test.db")
        super().__init__(engine, **kw)
        self.animation_level = "none"  # no tab-underline animation caught mid-flight

    def on_mount(self) -> None:
        super().on_mount()
        for inp in self.query(Input):
            inp.cursor_blink = False


def make_app(engine, **kw) -> QuietConsole:
    return QuietConsole(engine, **kw)


async def settle(app, pilot) -> None:
    """Wait until every worker has finished and the screen has caught up."""
    for _ in range(3):
        with contextlib.suppress(WorkerCancelled):  # an exclusive worker superseded by a newer one
            await app.workers.wait_for_complete()
        await pilot.pause()


def row(table, index: int) -> list[str]:
    """A table row as plain strings (cells are rich Text: data, never markup)."""
    return [
        getattr(c, "plain", c) if not isinstance(c, (int, float)) else str(c) for c in table.get_row_at(index)
    ]


def press_then(*keys: str, after=None):
    """A snapshot's `run_before`: settle, press `keys` one by one, then call `after(app)`."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(app, pilot)
        for k in keys:
            await pilot.press(k)
            await settle(app, pilot)
        if after is not None:
            after(app)
            await settle(app, pilot)

    return run_before


async def confirm_yes(app, pilot) -> None:
    """A writing key opened the confirmation: wait until it is armed (keys typed before it was
    seen never confirm), press y, settle."""
    from console.app.widgets.confirm import ARM_SECONDS, ConfirmModal

    assert isinstance(app.screen, ConfirmModal), f"expected a confirmation, got {app.screen!r}"
    await pilot.pause(ARM_SECONDS + 0.05)
    await pilot.press("y")
    await settle(app, pilot)
