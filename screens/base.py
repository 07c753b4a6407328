"""Pane: the base class of every console pane (one per module in screens/).

A pane gets the engine from the app (`self.engine`), loads data in thread workers, and implements
`refresh_data()`; the app calls it when the database changes (another process wrote, or this
console did) while the pane is visible, and marks hidden panes stale so they reload when shown.
See console/README-panes.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on
from textual.binding import Binding
from textual.containers import Vertical
from textual.notifications import SeverityLevel
from textual.widget import Widget
from textual.widgets import Input, Select
from textual.worker import Worker, get_current_worker

from console.app.widgets.confirm import ConfirmModal, PromptModal, Validator
from console.app.widgets.table import DataGrid
from engine.errors import InvalidInput

if TYPE_CHECKING:
    from textual import getters

    from console.app import MemConsole
    from engine.engine import MemoryEngine


def typed_id(text: str, what: str = "memory") -> int:
    """A row id the operator typed, refused as the engine refuses one (in a worker: a notice)."""
    try:
        return int(text)
    except ValueError:
        raise InvalidInput(f"a {what} id is a whole number, not {text!r}") from None


@dataclass
class PaneCommand:
    """An entry for the command palette while this pane is current."""

    name: str
    help: str
    callback: Callable[[], Any]


class Pane(Vertical):
    PANE_ID: ClassVar[str] = ""  # also the TabPane id: "sessions", "search", ...
    TITLE: ClassVar[str] = ""
    FILTER_SELECTOR: ClassVar[str] = "#filter"  # what `/` focuses
    MAIN_SELECTOR: ClassVar[str] = "DataGrid"  # what `escape` from an input returns to
    # Actions that act on the main table's selected row: pressed while focus is elsewhere (a
    # filter select, a button, another table) they do nothing but say so in one line.
    ROW_ACTIONS: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in cls.ROW_ACTIONS:
            fn = cls.__dict__.get(f"action_{name}")
            if fn is not None and not getattr(fn, "_row_guarded", False):
                setattr(cls, f"action_{name}", _row_guard(fn, name))

    BINDINGS = [Binding("escape", "leave_input", "Leave input", show=False, id="pane.leave_input")]

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("id", f"pane-{self.PANE_ID}")
        super().__init__(**kwargs)
        self.stale = True  # reload when next shown
        self._on_mounted: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
        self.ready = False  # mounted and every on_mount has run
        self._focus_target: Widget | None = None  # an explicit focus (focus_on) focus_main keeps

    @on(events.Mount)
    def _pane_mounted(self) -> None:
        # After every on_mount (the subclass's too) has run: the pending calls, then a first load.
        self.call_after_refresh(self._ready)

    def _ready(self) -> None:
        self.ready = True
        calls, self._on_mounted = self._on_mounted, []
        for fn, args, kwargs in calls:
            fn(*args, **kwargs)
        if self.app.current_pane() is self:
            self.activated()
            self.focus_main()

    def when_mounted(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Call `fn` now if the pane is mounted, else right after it mounts (panes mount lazily,
        the first time they are shown)."""
        if self.ready:
            fn(*args, **kwargs)
        else:
            self._on_mounted.append((fn, args, kwargs))

    # -- what the app gives every pane ----------------------------------------------------------
    if TYPE_CHECKING:
        # `self.app` as the type checker sees it: the console, with its cross-pane moves and its
        # engine (Textual's own typed getter; at run time the inherited property, nothing added).
        app = getters.app(MemConsole)

    @property
    def engine(self) -> MemoryEngine:
        return self.app.engine

    def refresh_data(self) -> None:
        """Reload everything the pane shows (start workers here). Must keep selection/scroll:
        use DataGrid.set_rows. Called when shown-while-stale and on every database change."""
        self.stale = False

    def activated(self) -> None:
        """The pane became the visible one."""
        if self.ready and self.stale:  # not ready yet: _ready() calls this again
            self.refresh_data()

    def data_changed(self, visible: bool) -> None:
        if visible and self.ready:
            self.refresh_data()
        else:
            self.stale = True

    def embedder_changed(self, state: str) -> None:
        """The embedding model's state moved (idle/loading/ready/failed/none)."""

    def commands(self) -> list[PaneCommand]:
        """Palette commands for this pane (the palette adds the global ones)."""
        return []

    def focus_filter(self) -> None:
        found = self.query(self.FILTER_SELECTOR)
        if found:
            found.first().focus()

    def focus_main(self) -> None:
        """Focus the pane's main widget (after a switch to this pane), unless focus is already
        inside the pane (e.g. a pre-filled input)."""
        target, self._focus_target = self._focus_target, None
        if target is not None:  # widget.focus() is deferred: app.focused may lag
            target.focus()
            return
        focused = self.app.focused
        if focused is not None and self in focused.ancestors:
            return
        main = self.query(self.MAIN_SELECTOR)
        if main and main.first().focusable:
            main.first().focus()

    def focus_on(self, widget: Widget) -> None:
        """Focus `widget` and keep the pane switch that may follow from moving focus elsewhere."""
        self._focus_target = widget
        widget.focus()

    def main_table(self) -> Widget | None:
        found = self.query(self.MAIN_SELECTOR)
        return found.first() if found else None

    def action_leave_input(self) -> None:
        """`escape` from any filter, input, select or other table: back to the main table."""
        main = self.main_table()
        if main is None:
            if isinstance(self.app.focused, Input):
                self.app.set_focus(None)
            return
        if self.app.focused is not main:
            main.focus()

    def on_main_table(self, action: str) -> bool:
        """Is focus on the main table (or nowhere in particular)? If not, say that `action` acts on
        its selected row and was not done (one notice, the shared style)."""
        main, focused = self.main_table(), self.app.focused
        if main is None or focused is None or focused is main:
            return True
        what = _plain_title(main)
        self.say(
            f"{action.replace('_', ' ')} acts on the selected row of {what}: press escape to go to it first."
        )
        return False

    def say(self, message: str, *, severity: SeverityLevel = "information", timeout: float = 3) -> None:
        """The one style of a pane's short notices."""
        self.app.notify(message, severity=severity, timeout=timeout)

    # -- a new filter puts the main table's cursor on its first row --------------------------------
    def _is_filter(self, widget: Widget) -> bool:
        if widget in self.query(self.FILTER_SELECTOR):
            return True
        return any("filter" in (n.id or "") for n in widget.ancestors_with_self if n is not self)

    @on(Input.Changed)
    @on(Input.Submitted)
    @on(Select.Changed)
    def _filter_moved(self, event: Input.Changed | Input.Submitted | Select.Changed) -> None:
        main = self.main_table()
        widget = event.control
        if isinstance(main, DataGrid) and widget is not None and self._is_filter(widget):
            main.cursor_to_top = True

    # -- helpers for workers and actions ---------------------------------------------------------------
    def deliver(self, fn: Callable[..., Any], *args: Any) -> None:
        """From a thread worker: run `fn(*args)` on the UI thread unless the worker was superseded."""
        if get_current_worker().is_cancelled:
            return
        self.app.call_from_thread(fn, *args)

    def wrote(self) -> None:
        """After this console changed the database: refresh every pane and the header counts.
        (PRAGMA data_version only moves for other connections' commits.)"""
        self.app.call_from_thread(self.app.data_changed)

    def confirm(
        self,
        title: str,
        body: str,
        on_yes: Callable[[], Any],
        *,
        confirm_label: str = "Confirm",
        require_text: str | None = None,
        danger: bool = False,
    ) -> None:
        """Ask before a consequential action; `on_yes()` runs only when confirmed. Every such
        action writes: on a read-only engine (a replica) it is refused at the key, in one line,
        instead of after the dialog (issue #24)."""
        if self.engine.read_only:
            why = self.engine.read_only_reason or "read-only"
            errors = getattr(self.app, "errors", None)
            if isinstance(errors, list):
                errors.append(why)
            self.app.notify(why, severity="warning", timeout=8)
            return

        def done(ok: bool | None) -> None:
            if ok:
                on_yes()

        self.app.push_screen(
            ConfirmModal(title, body, confirm_label=confirm_label, require_text=require_text, danger=danger),
            done,
        )

    def prompt(
        self,
        question: str,
        on_value: Callable[[str], Any],
        value: str = "",
        *,
        validate: Validator | None = None,
    ) -> None:
        """Ask for one value; `validate(text)` returns an error (shown inline, the dialog stays
        open) or None (the dialog closes and `on_value(text)` runs)."""

        def done(v: str | None) -> None:
            if v is not None:
                on_value(v)

        self.app.push_screen(PromptModal(question, value, validate=validate), done)

    def table(self, selector: str) -> DataGrid:
        return self.query_one(selector, DataGrid)

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        self.app.report_worker(event)


def _plain_title(widget: Widget) -> str:
    title = widget.border_title
    text = getattr(title, "plain", title)
    return f"the {text} table" if text else "the main table"


def _row_guard(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def guarded(self: Pane, *args: Any, **kwargs: Any) -> Any:
        if not self.on_main_table(name):
            return None
        return fn(self, *args, **kwargs)

    guarded._row_guarded = True  # type: ignore[attr-defined]
    guarded.__name__, guarded.__doc__ = fn.__name__, fn.__doc__
    return guarded
