"""The memconsole Textual app: a status header, seven panes in tabs, global keys, live refresh.

The App only composes panes and global behaviour; each pane lives in screens/<name>.py, or in
screens/<name>/pane.py beside the helpers only it uses, and is found through PANE_SPECS (imported
when first shown, so the first frame does not wait for it). The key guard (run_action: roles,
ask-first, read-only) is key_guard.py.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Input, TabbedContent, TabPane, TextArea
from textual.worker import Worker, WorkerState

from console.shared.env import embedder_choice
from console.shared.served import ServedOperator, served_operator
from console.shared.text_safety import visible

from .commands import ConsoleCommands
from .key_guard import KeyGuardedApp
from .settings import ConsoleSettings, load_console_settings
from .widgets.header import StatusHeader, read_only_mark
from .widgets.help import HelpScreen
from .widgets.notice_log import NoticeLog, NoticeLogScreen
from .widgets.table import DataGrid

if TYPE_CHECKING:
    from engine.engine import MemoryEngine
    from screens.base import Pane

HERE = Path(__file__).parent
SCREENS = HERE.parent.parent / "screens"


@dataclass(frozen=True)
class PaneSpec:
    key: str
    pane_id: str
    title: str
    target: str  # "module:Class"


PANE_SPECS = [
    PaneSpec("1", "sessions", "Sessions", "screens.sessions:SessionsPane"),
    PaneSpec("2", "search", "Search", "screens.search.pane:SearchPane"),
    PaneSpec("3", "rules", "Rules", "screens.rules.pane:RulesPane"),
    PaneSpec("4", "flows", "Flows", "screens.flows:FlowsPane"),
    PaneSpec("5", "curator", "Curator", "screens.curator.pane:CuratorPane"),
    PaneSpec("6", "decay", "Decay", "screens.decay.pane:DecayPane"),
    PaneSpec("7", "forget", "Forget & Audit", "screens.forget_audit:ForgetAuditPane"),
    PaneSpec("8", "recalls", "Recalls", "screens.recalls.pane:RecallsPane"),
]


def load_pane(spec: PaneSpec) -> Pane:
    """A new pane for `spec`; its module is imported now, the first time the pane is needed."""
    module_name, cls_name = spec.target.split(":")
    pane: Pane = getattr(importlib.import_module(module_name), cls_name)()
    return pane


# What the app asks of the panes it navigates to; the panes stay unknown to it until shown.
@runtime_checkable
class ShowsSessions(Protocol):
    def show_session(self, session_id: str, message_id: int | None = None) -> None: ...


@runtime_checkable
class TakesForgetRequests(Protocol):
    def prefill(self, **scope: Any) -> None: ...


class MemConsole(KeyGuardedApp):
    TITLE = "memconsole"
    CSS_PATH = [HERE / "app.tcss", *sorted(SCREENS.rglob("*.tcss"))]
    COMMANDS = App.COMMANDS | {ConsoleCommands}
    ENABLE_COMMAND_PALETTE = True
    LAZY_PANES = True  # a pane mounts when first shown (bench/console_first_frame.py)

    BINDINGS = [
        *[
            Binding(s.key, f"switch_pane('{s.pane_id}')", s.title, show=False, id=f"pane.{s.pane_id}")
            for s in PANE_SPECS
        ],
        Binding("slash", "focus_filter", "Search/filter", id="app.focus_filter"),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("ctrl+r", "refresh", "Refresh", show=False, id="app.refresh"),
        Binding("ctrl+n", "notices", "Notifications", show=False, id="app.notices"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(
        self,
        engine: MemoryEngine | None = None,
        *,
        db_path: str | None = None,
        actor: str | None = None,
        poll_interval: float | None = 0.5,  # a memory read on PostgreSQL (LISTEN), one PRAGMA on SQLite
        start_embedder: bool = True,
        db_label: str | None = None,
        settings: ConsoleSettings | None = None,
        read_only: bool = False,
    ) -> None:
        super().__init__()
        self.console_settings = settings or load_console_settings()  # [keymap]: before the engine opens
        # Started by `memconsole serve` for a signed-in operator: act as them (console/shared/served.py).
        self.served: ServedOperator | None = served_operator()
        self.notices = NoticeLog()  # what every notice said (ctrl+n)
        if engine is None:
            if db_path is None:
                raise ValueError("MemConsole needs an engine or a db_path")
            from engine import open_engine  # "lazy": the model loads after the first frame

            engine = open_engine(
                db_path, embedder=embedder_choice(), load="lazy", label=actor, read_only=read_only
            )
            self._owns_engine = True
        else:
            self._owns_engine = False
        self.engine = engine
        if self.served is not None:  # every change this console makes is recorded as theirs
            engine.actor = self.served.name
        self.pane_specs = PANE_SPECS
        self.poll_interval = poll_interval
        self.start_embedder_on_mount = start_embedder
        self.db_label = db_label or str(engine.path)  # what the header shows (tests fix it)
        self.errors: list[str] = []  # every failure shown as a notice (tests read it)
        self._panes: dict[str, Pane] = {}
        self._pane_ids = {s.pane_id for s in PANE_SPECS}
        self._data_version: int | None = None
        self._embedder_state: str | None = None

    def _who(self) -> tuple[str, bool]:
        """Your role and whether the database is read-only, for the header (one quick lookup)."""
        try:
            me = self.engine.operators.whoami()
            return me.role, me.read_only
        except Exception:  # noqa: BLE001 - the header still shows who you are
            return "", bool(getattr(self.engine, "read_only", False))

    # -- layout ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        role, read_only = self._who()
        mark = read_only_mark(self.engine) or ("read-only" if read_only else "")
        yield StatusHeader(self.db_label, self.engine.actor, role, mark, id="status")
        with TabbedContent(id="tabs"):
            for spec in PANE_SPECS:
                with TabPane(f"{spec.key} {spec.title}", id=spec.pane_id):
                    # The first frame is the header and the tabs; a pane's module is imported
                    # and the pane mounted when it is first shown.
                    if not self.LAZY_PANES:
                        yield self.pane(spec.pane_id)
        yield Footer()

    def on_mount(self) -> None:
        keymap = dict(self.console_settings.keymap)
        if keymap:  # [keymap] in config.toml: binding id -> keys
            self.set_keymap(keymap)
        self.query_one(StatusHeader).set_embedder(self.engine.embedder.state)
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        # The baseline comes before the panes' first reads: a commit landing between them and the
        # first poll moves the version past it and is shown (a baseline taken at that poll hid it).
        self._data_version = self.engine.data_version()
        self.ensure_pane(self.query_one("#tabs", TabbedContent).active)
        self.data_changed()
        if self.start_embedder_on_mount:
            # Let the panes' first queries finish before the model's import competes for the GIL.
            self.set_timer(0.5, self._start_embedder)
        if self.poll_interval:
            self.set_interval(self.poll_interval, self.poll_db)

    def _start_embedder(self) -> None:
        self.engine.embedder.start()
        self._embedder_changed(self.engine.embedder.state)

    close_engine_on_unmount = True  # run_console closes it itself, after the terminal is back

    def on_unmount(self) -> None:
        if self._owns_engine and self.close_engine_on_unmount:
            self.engine.close()

    # -- panes ------------------------------------------------------------------------------------
    def pane(self, pane_id: str) -> Pane:
        """The pane object (created on first use; mounted by ensure_pane)."""
        if pane_id not in self._panes:
            self._panes[pane_id] = load_pane(next(s for s in PANE_SPECS if s.pane_id == pane_id))
        return self._panes[pane_id]

    def ensure_pane(self, pane_id: str) -> None:
        """Mount a pane into its tab the first time it is needed."""
        pane = self.pane(pane_id)
        if pane.parent is None:
            self.query_one(f"TabPane#{pane_id}", TabPane).mount(pane)

    def notify(self, message: str, *, markup: bool = False, **kwargs: Any) -> None:
        """Notices quote operator and agent text (a typed score, an id in an error): never
        markup, or a "[/x]" in it crashed the console (Widget.notify passes markup=True)."""
        shown = visible(message)
        self.notices.add(str(kwargs.get("severity", "information")), shown)
        super().notify(shown, markup=False, **kwargs)

    def action_notices(self) -> None:
        """`ctrl+n`: the log of every notification shown (toasts vanish; this keeps them)."""
        if not isinstance(self.screen, NoticeLogScreen):
            self.push_screen(NoticeLogScreen(self.notices.newest_first()))

    def current_pane(self) -> Pane | None:
        try:
            return self._panes.get(self.query_one("#tabs", TabbedContent).active)
        except Exception:
            return None

    def switch_pane(self, pane_id: str) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        if tabs.active == pane_id:
            return
        # Drop focus first: a focused widget inside the old pane would pull the tabs back to it.
        self.set_focus(None)
        tabs.active = pane_id

    def action_switch_pane(self, pane_id: str) -> None:
        self.switch_pane(pane_id)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id in self._pane_ids:
            self.ensure_pane(event.pane.id)
            pane = self.pane(event.pane.id)
            pane.activated()
            self.call_after_refresh(self._focus_if_current, pane)  # keys reach the pane at once

    def _focus_if_current(self, pane: Pane) -> None:
        # A digit pressed while this pane was still mounting has moved on to another pane: a late
        # focus here would pull the tabs back, and the next keys would land in the wrong pane.
        if self.current_pane() is pane:
            pane.focus_main()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Single keys are text while an input has focus (escape leaves it).
        typing = isinstance(self.focused, (Input, TextArea))
        return not (typing and action in ("switch_pane", "focus_filter", "help", "quit"))

    def action_focus_filter(self) -> None:
        pane = self.current_pane()
        if pane is not None:
            pane.focus_filter()

    def action_help(self) -> None:
        palette = Binding(
            self.COMMAND_PALETTE_BINDING, "command_palette", "Command palette (knows the current pane)"
        )
        sections = [
            ("Global", [*self._bindings_of(self.BINDINGS), palette]),
            ("Tables", self._bindings_of(DataGrid.BINDINGS)),
        ]
        for spec in PANE_SPECS:
            pane = self.pane(spec.pane_id)
            own = [b for b in self._bindings_of(pane.BINDINGS) if b.show]
            if own:
                sections.append((f"{spec.key} {spec.title}", own))
        self.push_screen(HelpScreen(sections, dict(self.console_settings.keymap)))

    @staticmethod
    def _bindings_of(bindings: list[Any]) -> list[Binding]:
        return [b for b in bindings if isinstance(b, Binding)]

    def action_refresh(self) -> None:
        self.data_changed()

    # -- cross-pane navigation (screens never import each other) ------------------------------------
    def open_message(self, session_id: str, message_id: int | None = None) -> None:
        """Show a session (and one of its messages) in pane 1."""
        self.switch_pane("sessions")
        self.ensure_pane("sessions")
        pane = self.pane("sessions")
        assert isinstance(pane, ShowsSessions)
        pane.when_mounted(pane.show_session, session_id, message_id)

    def start_forget(self, **prefill: Any) -> None:
        """Open pane 7 with a forget request pre-filled (e.g. memory_id=12)."""
        self.switch_pane("forget")
        self.ensure_pane("forget")
        pane = self.pane("forget")
        assert isinstance(pane, TakesForgetRequests)
        pane.when_mounted(pane.prefill, **prefill)

    # -- live refresh --------------------------------------------------------------------------------
    def data_changed(self) -> None:
        """The database changed: refresh the header, the visible pane now, the others when shown."""
        self.refresh_counts()
        current = self.current_pane()
        for pane in self._panes.values():
            pane.data_changed(visible=pane is current)

    @work(thread=True, exclusive=True, exit_on_error=False, group="app.counts")
    def refresh_counts(self) -> None:
        counts = self.engine.counts()
        rules = self.engine.rules.counts()
        from engine.errors import EngineError

        try:  # runs the checks a change made due (only those), then counts the failing ones
            failing = len(self.engine.checks.failing())
        except EngineError:
            failing = 0  # the header still shows the rest; pane 8 says why
        self.call_from_thread(self.query_one(StatusHeader).set_counts, counts, rules, failing)

    @work(thread=True, exclusive=True, exit_on_error=False, group="app.poll")
    def poll_db(self) -> None:
        """Another process committed (data_version moved), or the model finished loading."""
        dv = self.engine.data_version()
        state = self.engine.embedder.state
        if state != self._embedder_state:
            self.call_from_thread(self._embedder_changed, state)
        if self._data_version is None:
            self._data_version = dv
        elif dv != self._data_version:
            self._data_version = dv
            self.call_from_thread(self.data_changed)

    def _embedder_changed(self, state: str) -> None:
        first = self._embedder_state is None
        self._embedder_state = state
        self.query_one(StatusHeader).set_embedder(state)
        for pane in self._panes.values():
            if pane.ready:  # a pane mounted later reads the state in its on_mount
                pane.embedder_changed(state)
        if state == "ready" and self._owns_engine:
            # A long-lived console answers vector search from memory (vec0 scans until loaded).
            self.engine.vectors.keep_in_memory(background=True)
        if not first and state == "ready":
            self.notify("Embedding model ready: search is hybrid now.", timeout=3)
        elif state == "failed":
            self.notify(
                f"Embedding model failed to load; search stays keyword-only. "
                f"{self.engine.embedder.error or ''}",
                severity="warning",
            )

    # -- failures: one place, readable, never a traceback -----------------------------------------
    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        self.report_worker(event)

    def report_worker(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        from engine.errors import EngineError

        err = event.worker.error
        first = (str(err).splitlines() or [""])[0]
        if isinstance(err, EngineError):
            msg, severity = first or type(err).__name__, "warning"
        else:
            msg, severity = f"internal error in {event.worker.group}: {type(err).__name__}: {first}", "error"
        self.errors.append(msg)
        self.notify(msg, severity=severity, timeout=8)


def run_console(db_path, actor: str | None = None, read_only: bool = False) -> None:
    """`memconsole` with no verb: open the console on `db_path` (`read_only`: `--read-only`)."""
    app = MemConsole(db_path=str(db_path), actor=actor, read_only=read_only)
    app.close_engine_on_unmount = False
    try:
        app.run()
    finally:
        # close() lets a half-loaded model finish (exiting mid-import aborts): that takes seconds,
        # so say why the terminal waits instead of leaving it blank after `q`.
        if app.engine.embedder.state == "loading":
            print(
                "memconsole: letting the embedding model finish loading before exit…",
                file=sys.stderr,
                flush=True,
            )
        app.engine.close()
    if app.return_code:  # the app died on an error: the shell must not see success
        raise SystemExit(app.return_code)
