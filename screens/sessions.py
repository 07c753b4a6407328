"""Pane 1 — Sessions: the episodic log. A filterable session list, the transcript (roles, tools,
times), lineage (parent / children), full-text message search (CJK too), and the links between
messages and the memories derived from them."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input

from console.app.widgets.filter_input import FilterHint, FilterInput
from console.app.widgets.fmt import centred, one_line, when
from console.app.widgets.safe import SafeStatic as Static  # data, never raw controls or markup
from console.app.widgets.table import DataGrid
from engine.filter_language import Filter
from engine.filter_language import parse_filter as parse_any
from engine.types import Memory, MessageHit, Session, SessionDetail
from engine.types import Message as SessionMessage

from .base import Pane, PaneCommand, typed_id

CELL_MAX = 2000  # a cell holds the whole line; the flexible column cuts it to the width
ROLE_STYLE = {"user": "bold cyan", "assistant": "bold green", "system": "bold magenta", "tool": "bold yellow"}


def parse_filter(text: str, strict: bool = True) -> dict:
    """'agent:atlas since:2026-01-01 deploy' -> list_sessions keyword arguments (the one filter
    language, engine/filter_language). Not strict (while the operator is still typing), a last
    token that does not parse yet is left out instead of raising."""
    return parse_any(text, "sessions", partial=not strict).kwargs()


class SessionsPane(Pane):
    PANE_ID = "sessions"
    TITLE = "Sessions"
    FILTER_SELECTOR = "#filter"
    MAIN_SELECTOR = "#session-list"

    BINDINGS = [
        *Pane.BINDINGS,
        Binding("s", "focus_message_search", "Search messages", id="sessions.search_messages"),
        Binding("m", "memories", "Derived memories", id="sessions.memories"),
        Binding("P", "parent", "Parent session", id="sessions.parent"),
        Binding("C", "child", "Child session", id="sessions.child"),
        Binding("M", "memory_source", "Memory → source", id="sessions.memory_source"),
    ]

    @dataclass
    class SessionOpened(Message):
        detail: SessionDetail
        message_id: int | None

    def __init__(self) -> None:
        super().__init__()
        self.detail: SessionDetail | None = None
        self.messages: dict[str, SessionMessage] = {}
        self.message_hits: dict[str, MessageHit] = {}
        self._child_index = 0
        self._query = ""
        self._hits_width = 0

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="sessions-left"):
                yield FilterInput(
                    "sessions",
                    hint="#filter-hint",
                    placeholder="filter: text agent:NAME user:NAME source:X since:DATE until:DATE",
                    id="filter",
                )
                yield FilterHint(id="filter-hint")
                yield DataGrid(id="session-list", flex_column="title")
                yield Input(placeholder="search messages (any language, e.g. 部署)…", id="message-search")
                yield DataGrid(id="message-hits", flex_column="snippet", enter_selects=True)
            with Vertical(id="sessions-right"):
                yield Static("Select a session.", id="lineage")
                yield DataGrid(id="transcript", flex_column="message")
                with VerticalScroll(id="message-detail", classes="panel"):
                    yield Static("", id="message-text")
                yield DataGrid(id="derived", flex_column="content")
                with Horizontal(id="jump-bar"):
                    yield Static("memory # → source message:", classes="hint")
                    yield Input(placeholder="id", id="memory-jump", type="integer")

    def on_mount(self) -> None:
        self.table("#session-list").add_columns("started", "title", "agent", "user", "source", "msgs")
        self.table("#message-hits").add_columns("session", "role", "at", "snippet")
        self.table("#transcript").add_columns("at", "role", "tool", "message", "id")
        self.table("#derived").add_columns("memory", "tier", "category", "content")
        self.query_one("#session-list").border_title = "sessions"
        self.query_one("#message-hits").border_title = "message search"
        self.query_one("#transcript").border_title = "transcript"
        self.query_one("#derived").border_title = "memories derived from the message"
        self.query_one("#message-detail").border_title = "message"

    # -- session list -------------------------------------------------------------------------------
    def refresh_data(self) -> None:
        super().refresh_data()
        self.load_sessions(self.query_one("#filter", FilterInput).filter)
        if self.detail is not None:
            self.open_session(self.detail.session.id, None)

    @on(FilterInput.Parsed, "#filter")
    def _filtered(self, event: FilterInput.Parsed) -> None:
        self.load_sessions(event.filter)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sessions.list")
    def load_sessions(self, f: Filter) -> None:
        sessions = self.engine.sessions.list(**f.kwargs())
        self.deliver(self._show_sessions, sessions)

    def _show_sessions(self, sessions: list[Session]) -> None:
        self.query_one("#filter", FilterInput).set_known(
            agent={s.agent for s in sessions if s.agent},
            user={s.user for s in sessions if s.user},
            source={s.source for s in sessions if s.source},
        )
        t = self.table("#session-list")
        t.set_rows(
            (
                s.id,
                [
                    when(s.started_at),
                    one_line(s.title or s.id, CELL_MAX),  # second: on screen even at 80 columns
                    s.agent or "–",
                    s.user or "–",
                    s.source or "–",
                    s.message_count,
                ],
            )
            for s in sessions
        )
        t.border_title = f"sessions ({len(sessions)}{'+' if len(sessions) >= 500 else ''})"
        if self.detail is None and sessions and t.selected_key:
            self.open_session(t.selected_key, None)

    @on(DataGrid.RowSelected, "#session-list")
    @on(DataGrid.RowHighlighted, "#session-list")
    def _session_chosen(self, event) -> None:
        key = event.row_key.value if event.row_key else None
        if key and (self.detail is None or self.detail.session.id != key):
            self.open_session(key, None)

    # -- a session: lineage + transcript -------------------------------------------------------------
    def show_session(self, session_id: str, message_id: int | None = None) -> None:
        """Open a session (from another pane too) and put the cursor on one of its messages."""
        self.open_session(session_id, message_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sessions.open")
    def open_session(self, session_id: str, message_id: int | None) -> None:
        detail = self.engine.sessions.get(session_id)
        self.deliver(self.post_message, self.SessionOpened(detail, message_id))

    @on(SessionOpened)
    def _opened(self, event: SessionOpened) -> None:
        d = event.detail
        same = self.detail is not None and self.detail.session.id == d.session.id
        self.detail = d
        if not same:
            self._child_index = 0
        s = d.session
        t = Text()
        t.append(f"{s.title or s.id}\n", style="bold")
        t.append(
            f"{s.id} · {s.agent or '–'}/{s.user or '–'} · {s.source or '–'} · "
            f"{s.model or '–'} · {when(s.started_at)}\n",
            style="dim",
        )
        t.append("parent: ", style="bold")
        t.append(f"{d.parent.id} ({one_line(d.parent.title or '', 30)})" if d.parent else "none")
        t.append("   children: ", style="bold")
        t.append(", ".join(c.id for c in d.children) if d.children else "none")
        self.query_one("#lineage", Static).update(t)
        self.messages = {str(m.id): m for m in d.messages}
        tr = self.table("#transcript")
        if not same:
            tr.clear()
        tr.set_rows(
            (
                m.id,
                [
                    when(m.at),
                    Text(m.role, style=ROLE_STYLE.get(m.role, "")),
                    m.tool_name or "",
                    one_line(m.content, CELL_MAX),
                    m.id,
                ],
            )
            for m in d.messages
        )
        tr.border_title = f"transcript ({len(d.messages)} messages)"
        if event.message_id is not None:
            tr.select_key(event.message_id)
            self.focus_on(tr)
        self.table("#session-list").select_key(s.id)
        self._show_message(tr.selected_key)

    @on(DataGrid.RowHighlighted, "#transcript")
    def _message_highlighted(self, event: DataGrid.RowHighlighted) -> None:
        self._show_message(event.row_key.value if event.row_key else None)

    def _show_message(self, key: str | None) -> None:
        m = self.messages.get(key or "")
        box = self.query_one("#message-text", Static)
        if m is None:
            box.update("")
            self.table("#derived").set_rows([])
            return
        t = Text()
        t.append(f"#{m.id} ", style="bold")
        t.append(m.role, style=ROLE_STYLE.get(m.role, ""))
        if m.tool_name:
            t.append(f" · tool {m.tool_name}", style="yellow")
        t.append(f" · {when(m.at)} · {m.token_count or 0} tokens\n", style="dim")
        t.append(m.content)
        box.update(t)
        self.load_derived(m.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sessions.derived")
    def load_derived(self, message_id: int) -> None:
        mems = self.engine.memories.from_message(message_id)
        self.deliver(self._show_derived, mems)

    def _show_derived(self, mems: list[Memory]) -> None:
        t = self.table("#derived")
        t.set_rows((m.id, [f"#{m.id}", m.tier, m.category, one_line(m.content, CELL_MAX)]) for m in mems)
        t.border_title = f"memories derived from the message ({len(mems)})"

    # -- message search ---------------------------------------------------------------------------------
    @on(Input.Submitted, "#message-search")
    def _message_search(self, event: Input.Submitted) -> None:
        self._query = event.value
        self.search_messages(event.value)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sessions.msgsearch")
    def search_messages(self, query: str) -> None:
        hits = self.engine.sessions.search_messages(query, limit=200)
        self.deliver(self._show_message_hits, hits)

    def _show_message_hits(self, hits: list[MessageHit]) -> None:
        self.message_hits = {str(h.message.id): h for h in hits}
        t = self.table("#message-hits")
        t.clear()  # a new search: its best match first, not the old cursor position
        self._fill_hits(hits)
        t.border_title = f"message search ({len(hits)} matches)"
        if hits:
            t.focus()

    def _fill_hits(self, hits: list[MessageHit], width: int | None = None) -> None:
        t = self.table("#message-hits")
        width = width or _column_width(t, "snippet")
        self._hits_width = width
        t.set_rows(
            (
                h.message.id,
                [
                    h.message.session_id,
                    h.message.role,
                    when(h.message.at),
                    centred(h.message.content, self._query, width),  # the match in the middle
                ],
            )
            for h in hits
        )
        self.call_after_refresh(self._recentre_hits)

    def _recentre_hits(self) -> None:
        """The snippet column's width settles once the rows are in: centre the matches again."""
        width = _column_width(self.table("#message-hits"), "snippet")
        if width != self._hits_width:
            self._fill_hits(list(self.message_hits.values()), width)

    @on(DataGrid.RowSelected, "#message-hits")
    def _hit_chosen(self, event: DataGrid.RowSelected) -> None:
        h = self.message_hits.get(event.row_key.value or "")
        if h is not None:
            self.open_session(h.message.session_id, h.message.id)

    # -- memory -> source message ----------------------------------------------------------------------
    @on(Input.Submitted, "#memory-jump")
    def _jump(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.memory_source(event.value.strip())

    @work(thread=True, exclusive=True, exit_on_error=False, group="sessions.jump")
    def memory_source(self, memory_id: str) -> None:
        mem = self.engine.memories.get(typed_id(memory_id))
        if not mem.session_id:
            self.app.call_from_thread(
                self.notify, f"Memory #{mem.id} has no source session.", severity="warning"
            )
            return
        detail = self.engine.sessions.get(mem.session_id)
        self.deliver(self.post_message, self.SessionOpened(detail, mem.message_id))

    # -- actions -----------------------------------------------------------------------------------------
    def action_focus_message_search(self) -> None:
        self.add_class("-msgs")  # a short terminal shows the message search only when asked for
        self.query_one("#message-search", Input).focus()

    def action_memories(self) -> None:
        self.add_class("-derived")
        self.table("#derived").focus()

    def action_memory_source(self) -> None:
        t = self.table("#derived")
        if self.app.focused is t and t.selected_key:
            self.memory_source(t.selected_key)
        else:
            self.add_class("-derived")
            self.query_one("#memory-jump", Input).focus()

    # -- the layout: a short terminal keeps the session list and the transcript -------------------------
    COMPACT_BELOW = 30  # rows of the pane (80×24 gives ~19): fewer, and the extras fold away

    def on_resize(self) -> None:
        self.set_class(self.size.height < self.COMPACT_BELOW, "-compact")

    @on(events.DescendantFocus, "#filter, #session-list, #transcript")
    def _back_to_the_sessions(self) -> None:
        # Focus back on the list or transcript (escape, a click): the message search and the derived
        # memories `s` / `m` / `M` unfolded fold away again in a short terminal.
        self.remove_class("-msgs", "-derived")

    def action_parent(self) -> None:
        if self.detail and self.detail.parent:
            self.open_session(self.detail.parent.id, None)
        else:
            self.notify("This session has no parent.", timeout=2)

    def action_child(self) -> None:
        if self.detail and self.detail.children:
            kids = self.detail.children
            child = kids[self._child_index % len(kids)]
            self._child_index += 1
            self.open_session(child.id, None)
        else:
            self.notify("This session has no children.", timeout=2)

    def commands(self) -> list[PaneCommand]:
        return [
            PaneCommand(
                "Search messages", "Full-text search of transcripts", self.action_focus_message_search
            ),
            PaneCommand(
                "Memories derived from the message", "Focus the derived memories", self.action_memories
            ),
            PaneCommand("Open parent session", "Lineage: go to the parent", self.action_parent),
            PaneCommand("Open child session", "Lineage: go to a child (repeats cycle)", self.action_child),
            PaneCommand(
                "Memory → source message", "Jump from a memory id to its message", self.action_memory_source
            ),
        ]


def _column_width(grid: DataGrid, label: str, default: int = 60) -> int:
    """The width a column shows now (the flexible one: what the terminal leaves it)."""
    for col in grid.columns.values():
        if col.label.plain == label and not col.auto_width:
            return max(col.width, 8)
    return default
