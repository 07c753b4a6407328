"""Pane 8 — Recalls: every agent recall as it was asked (door, agent, query, filters, mode, k) and
what it returned; `w` asks "why not memory N?" for that recall's query and filters, `r` replays it
now and names what changed (merged into #M, forgotten by case #F, archived, edited, new), `p` pins
a retrieval check from it, `c` runs every check; failing checks list below with why-not."""

from __future__ import annotations

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input

from console.app.widgets.fmt import one_line, when
from console.app.widgets.safe import SafeStatic as Static  # data, never raw controls or markup
from console.app.widgets.table import DataGrid
from engine.clock import parse_time
from engine.errors import InvalidInput, NotFound
from engine.recalls.types import Check, Recall, ReplayDiff
from engine.types import Explanation

from ..base import Pane, PaneCommand, typed_id

LIMIT = 500
CELL_MAX = 2000
FILTER_KEYS = ("agent", "since")


def parse_filter(text: str, strict: bool = True) -> dict:
    """'agent:atlas since:2026-01-01 deploy key' -> Recalls.list keyword arguments."""
    out: dict = {}
    words = []
    for tok in text.split():
        key, sep, val = tok.partition(":")
        if sep and key in FILTER_KEYS and val:
            if key == "since":
                try:
                    out["since"] = parse_time(val)
                except InvalidInput:
                    if strict:
                        raise
            else:
                out[key] = val
        else:
            words.append(tok)
    if words:
        out["text"] = " ".join(words)
    return out


def _filters(f: dict) -> str:
    return " ".join(f"{k}={','.join(v) if isinstance(v, list) else v}" for k, v in sorted(f.items()))


class RecallsPane(Pane):
    PANE_ID = "recalls"
    TITLE = "Recalls"
    MAIN_SELECTOR = "#recall-list"
    ROW_ACTIONS = frozenset({"why_not", "replay", "pin"})

    BINDINGS = [
        *Pane.BINDINGS,
        Binding("w", "why_not", "Why not #N?", id="recalls.why_not"),
        Binding("r", "replay", "Replay now", id="recalls.replay"),
        Binding("p", "pin", "Pin check", id="recalls.pin"),
        Binding("c", "run_checks", "Run checks", id="recalls.run_checks"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.recalls: dict[str, Recall] = {}
        self.current: Recall | None = None
        self.checks: dict[str, Check] = {}

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(id="recalls-left"):
                yield Input(placeholder="filter: words agent:NAME since:DATE", id="filter")
                yield DataGrid(id="recall-list", flex_column="query")
                yield DataGrid(id="check-list", flex_column="why")
            with Vertical(id="recalls-right"):
                yield Static("Select a recall.", id="recall-head")
                yield DataGrid(id="recall-hits", flex_column="content")
                with VerticalScroll(id="recall-result", classes="panel"):
                    yield Static("r: replay now · w: why not memory N? · p: pin a check", id="recall-text")

    def on_mount(self) -> None:
        self.table("#recall-list").add_columns("query", "agent", "at", "hits")
        self.table("#check-list").add_columns("check", "status", "memory", "k", "query", "why")
        self.table("#recall-hits").add_columns("#", "memory", "score", "bm25", "vector", "content")
        self.query_one("#recall-list").border_title = "recalls"
        self.query_one("#check-list").border_title = "retrieval checks"
        self.query_one("#recall-hits").border_title = "hits as returned"
        self.query_one("#recall-result").border_title = "replay / why not"

    def commands(self) -> list[PaneCommand]:
        return [
            PaneCommand(
                "Replay recall", "Run the selected recall now and show what changed", self.action_replay
            ),
            PaneCommand("Run retrieval checks", "Run every pinned check now", self.action_run_checks),
        ]

    # -- the list ------------------------------------------------------------------------------------
    def refresh_data(self) -> None:
        super().refresh_data()
        self.load_recalls(self.query_one("#filter", Input).value, strict=False)
        self.load_checks(False)

    @on(Input.Changed, "#filter")
    def _filter_typed(self, event: Input.Changed) -> None:
        self.load_recalls(event.value, strict=False)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self.load_recalls(event.value)

    @work(thread=True, exclusive=True, exit_on_error=False, group="recalls.list")
    def load_recalls(self, text: str, strict: bool = True) -> None:
        rows = self.engine.recalls.list(limit=LIMIT, **parse_filter(text, strict))
        self.deliver(self._show_recalls, rows)

    def _show_recalls(self, rows: list[Recall]) -> None:
        self.recalls = {str(r.id): r for r in rows}
        t = self.table("#recall-list")
        t.set_rows(
            # the query first: on screen even at 80 columns (the year is in the recall's header)
            (r.id, [one_line(r.query, CELL_MAX), r.agent or r.actor, when(r.at)[5:], len(r.hits)])
            for r in rows
        )
        t.border_title = f"recalls ({len(rows)}{'+' if len(rows) >= LIMIT else ''})"
        if self.current is None and rows and t.selected_key:
            self.open_recall(t.selected_key)

    @on(DataGrid.RowSelected, "#recall-list")
    @on(DataGrid.RowHighlighted, "#recall-list")
    def _recall_chosen(self, event) -> None:
        key = event.row_key.value if event.row_key else None
        if key and (self.current is None or str(self.current.id) != key):
            self.open_recall(key)

    # -- one recall: its hits as returned -------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="recalls.open")
    def open_recall(self, key: str) -> None:
        rec = self.engine.recalls.get(int(key))
        texts = {}
        for h in rec.hits:
            try:
                texts[h.id] = self.engine.memories.get(h.id).content
            except NotFound:
                texts[h.id] = ""
        self.deliver(self._show_recall, rec, texts)

    def _show_recall(self, rec: Recall, texts: dict[int, str]) -> None:
        self.current = rec
        t = Text()
        t.append(f"{rec.query}\n", style="bold")
        t.append(
            f"#{rec.id} · {when(rec.at)} · {rec.door} · agent {rec.agent or '–'} · caller {rec.actor}\n"
            f"{_filters(rec.filters)} · {rec.mode} · k {rec.k} · {rec.latency_ms or 0:.1f} ms"
            f" · {rec.model or '–'}",
            style="dim",
        )
        self.query_one("#recall-head", Static).update(t)
        rows: list[tuple[str | int, list]] = []
        for i, h in enumerate(rec.hits, 1):
            content = texts.get(h.id) or "(gone)"
            rows.append((h.id, [i, h.id, f"{h.score:.4f}", h.parts.get("bm25_rank") or "–",
                                h.parts.get("vector_rank") or "–", one_line(content, CELL_MAX)]))  # fmt: skip
        for rank, case in rec.forgotten:
            rows.append((f"f{rank}", [rank, "–", "–", "–", "–", f"(forgotten by case #{case})"]))
        self.table("#recall-hits").set_rows(rows)
        self.query_one("#recall-text", Static).update("r: replay now · w: why not memory N? · p: pin a check")

    # -- replay, why not -------------------------------------------------------------------------------
    def _selected(self) -> Recall | None:
        key = self.table("#recall-list").selected_key
        rec = self.recalls.get(key) if key else None
        if rec is None:
            self.say("No recall selected.")
        return rec

    def action_replay(self) -> None:
        rec = self._selected()
        if rec is not None:
            self.query_one("#recall-text", Static).update(f"replaying recall #{rec.id}…")
            self.run_replay(rec.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="recalls.replay")
    def run_replay(self, recall_id: int) -> None:
        self.deliver(self._show_replay, self.engine.recalls.replay(recall_id))

    def _show_replay(self, d: ReplayDiff) -> None:
        t = Text()
        what = "the same hits" if d.same else f"{len(d.left)} left, {len(d.entered)} entered"
        t.append(f"replayed now ({d.mode}): {what}\n", style="bold")
        for c in d.left:
            t.append("  − ", style="bold red")
            t.append(f"{'#' + str(c.memory_id) if c.memory_id else 'a hit'} (was {c.was_rank}): {c.cause}\n")
        for c in d.entered:
            t.append("  + ", style="bold green")
            t.append(f"#{c.memory_id} (now {c.now_rank}): {c.cause}\n")
        if d.message:
            t.append(d.message, style="dim")
        self.query_one("#recall-text", Static).update(t)

    def _hit_default(self) -> str:
        key = self.table("#recall-hits").selected_key
        return key if key and not key.startswith("f") else ""

    def action_why_not(self) -> None:
        rec = self._selected()
        if rec is not None:
            self.prompt(f"Why not which memory for recall #{rec.id}?", lambda v: self.run_why(rec.id, v),
                        self._hit_default(), validate=_id_error)  # fmt: skip

    @work(thread=True, exclusive=True, exit_on_error=False, group="recalls.why")
    def run_why(self, recall_id: int, text: str) -> None:
        ex = self.engine.recalls.why_not(recall_id, typed_id(text))
        self.deliver(self._show_why, ex)

    def _show_why(self, ex: Explanation) -> None:
        t = Text()
        t.append(
            f"memory #{ex.memory_id}: {'in' if ex.in_top_k else 'not in'} the top {ex.k} now\n", style="bold"
        )
        t.append(ex.summary)
        self.query_one("#recall-text", Static).update(t)

    # -- checks ----------------------------------------------------------------------------------------
    def action_pin(self) -> None:
        rec = self._selected()
        if rec is not None:
            ask = f"Pin which memory in the top {rec.k} for recall #{rec.id}?"
            self.prompt(ask, lambda v: self.run_pin(rec.id, v), self._hit_default(), validate=_id_error)

    @work(thread=True, exclusive=True, exit_on_error=False, group="recalls.pin")
    def run_pin(self, recall_id: int, text: str) -> None:
        c = self.engine.checks.add_from_recall(recall_id, typed_id(text))
        self.deliver(self.say, f"check #{c.id} pinned: memory #{c.memory_id} in the top {c.k} ({c.status})")
        self.wrote()

    def action_run_checks(self) -> None:
        self.load_checks(True)

    @work(thread=True, exclusive=True, exit_on_error=False, group="recalls.checks")
    def load_checks(self, run_all: bool) -> None:
        if run_all:
            self.engine.checks.run()
        else:
            self.engine.checks.run_due()  # what a curator apply, forget, decay or import touched
        self.deliver(self._show_checks, self.engine.checks.list())

    def _show_checks(self, checks: list[Check]) -> None:
        self.checks = {str(c.id): c for c in checks}
        t = self.table("#check-list")
        t.set_rows(
            (c.id, [c.id, c.status, c.memory_id, c.k, one_line(c.query, 200), one_line(c.last_why, CELL_MAX)])
            for c in sorted(checks, key=lambda c: (c.last_ok is not False, c.id))
        )
        failing = sum(1 for c in checks if c.last_ok is False)
        t.border_title = f"retrieval checks ({len(checks)}, {failing} failing)"

    @on(DataGrid.RowHighlighted, "#check-list")
    def _check_chosen(self, event: DataGrid.RowHighlighted) -> None:
        """A check under the cursor: its whole why-not, wrapped in the panel (the table's cell is
        cut to the column at 80 columns). Only while the check list has focus: a refresh that
        moves its cursor does not replace what the panel shows."""
        if event.data_table.has_focus and event.row_key:
            self._show_check(str(event.row_key.value))

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        grid = self.table("#check-list")
        if event.widget is grid and grid.selected_key:
            self._show_check(grid.selected_key)

    def _show_check(self, key: str) -> None:
        c = self.checks.get(key)
        if c is None:
            return
        t = Text()
        t.append(f"check #{c.id} · {c.status} · memory #{c.memory_id} in the top {c.k}\n", style="bold")
        t.append(f"“{c.query}” · {_filters(c.filters)}\n", style="dim")
        t.append(c.last_why or ("in the top k" if c.last_ok else "not run yet"))
        self.query_one("#recall-text", Static).update(t)


def _id_error(text: str) -> str | None:
    return None if text.strip().isdigit() else "a memory id is a whole number"
