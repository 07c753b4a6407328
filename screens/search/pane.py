"""Pane 2 — Search: hybrid search with filters, the score breakdown of the selected hit as bars,
"why not?" for any memory id, hints of where else a thin query matches, and actions on a hit.

The console searches with record_access=False: auditing never changes what it audits."""

from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Select

from console.app.widgets.bars import breakdown_text
from console.app.widgets.filter_input import FilterHint, FilterInput
from console.app.widgets.fmt import CELL_MAX, one_line
from console.app.widgets.header import badge
from console.app.widgets.safe import SafeStatic as Static  # data, never raw controls or markup
from console.app.widgets.table import DataGrid
from engine.filter_language import FilterError, parse_filter
from engine.retrieval.fusion import weight_formula, weight_numbers
from engine.types import CATEGORIES, KINDS, Explanation, Hit, SearchResult
from screens.base import Pane, PaneCommand, typed_id

from .edits import HitEdits
from .hidden import Hidden, hidden_stronger, hidden_text, needs_wide

TIER_OPTIONS = [
    ("core+active", "default"),
    ("all tiers", "all"),
    ("core", "core"),
    ("active", "active"),
    ("archived", "archived"),
]
# id, tier and agent before the content: at 80 columns they stay on screen (the scores scroll). #27
COLUMNS = ("#", "id", "tier", "agent", "content", "final", "bm25", "vec", "sim", "strength", "imp", "recency")


def _fmt(v, spec: str = ".3f") -> str:
    return "–" if v is None else format(v, spec)


class SearchPane(HitEdits):
    PANE_ID = "search"
    TITLE = "Search"
    FILTER_SELECTOR = "#query"
    MAIN_SELECTOR = "#results"
    K = 25

    BINDINGS = [
        *Pane.BINDINGS,
        Binding("space", "mark", "Mark", id="search.mark"),
        Binding("p", "pin", "Pin/unpin", id="search.pin"),
        Binding("i", "importance", "Importance", id="search.importance"),
        Binding("a", "archive", "Archive", id="search.archive"),
        Binding("R", "restore", "Restore", id="search.restore"),
        Binding("n", "new_memory", "New", id="search.new"),
        Binding("e", "edit_memory", "Edit text", id="search.edit"),
        Binding("f", "forget", "Forget…", id="search.forget"),
        Binding("o", "source", "Source msg", id="search.source"),
        Binding("w", "why_not", "Why not?", id="search.why_not"),
        Binding("c", "pin_check", "Check…", id="search.check"),
        Binding("d", "toggle_detail", "Detail", id="search.detail"),
    ]

    @dataclass
    class SearchSubmitted(Message):
        query: str

    @dataclass
    class SearchFinished(Message):
        result: SearchResult
        ms: float
        filters: dict  # the filters this search ran with (`w` explains against the same)
        writers: dict = field(default_factory=dict)  # memory id -> who added it (the audit's actor)
        hidden: list[Hidden] = field(default_factory=list)  # stronger matches the filters hid

    def __init__(self) -> None:
        super().__init__()
        self.result: SearchResult | None = None
        self.searched_filters: dict = {}
        self.writers: dict = {}
        self.hits: dict[str, Hit] = {}
        self.known_agents: list[str] = []  # every agent with memories or rules (completion)
        self.marked: list[int] = []  # rows marked with space, in marking order; a/p/f act on them

    def compose(self) -> ComposeResult:
        with Horizontal(id="search-bar"):
            yield FilterInput(
                "search",
                hint="#query-hint",
                placeholder="search memories (enter)…  agent: tier: kind: user: filter · / focuses here",
                id="query",
            )
            yield Static(badge("idle"), id="mode-badge")
        yield FilterHint(id="query-hint")
        with Horizontal(id="search-filters"):
            yield Select(TIER_OPTIONS, value="default", allow_blank=False, id="f-tier")
            yield Select([(k, k) for k in KINDS], prompt="any kind", id="f-kind")
            yield Select([(c, c) for c in CATEGORIES], prompt="any category", id="f-category")
            yield Input(placeholder="agent", id="f-agent")
            yield Input(placeholder="user", id="f-user")
        yield Static("Type a query and press enter.", id="search-status", classes="hint")
        yield DataGrid(id="results", flex_column="content", flex_min=28)
        with Horizontal(id="hit-detail", classes="panel"):
            yield Static("", id="breakdown")
            with VerticalScroll(id="hit-text-scroll"):
                yield Static("", id="hit-text")
        yield Static("", id="elsewhere", classes="hint")  # shown when it says something
        with Horizontal(id="why-bar"):
            yield Static("why not? memory #", classes="hint")
            yield Input(placeholder="id", id="whynot", type="integer")
        yield Static("", id="why-result")

    def on_mount(self) -> None:
        t = self.query_one("#results", DataGrid)
        t.add_column("✓", key="mark")
        t.add_columns(*COLUMNS)
        self.query_one("#hit-detail").border_title = "breakdown"
        self.embedder_changed(self.engine.embedder.state)

    # -- the workflow: SearchSubmitted -> (worker) -> SearchFinished -----------------------------
    def filters(self) -> dict:
        """The filter widgets, and over them the keys typed in the query (`agent:atlas deploy`)."""
        return {**self.widget_filters(), **self.query_one("#query", FilterInput).filter.kwargs()}

    def widget_filters(self) -> dict:
        def val(sel: str):
            w = self.query_one(sel, Select)
            return None if w.is_blank() or w.value == "default" else w.value

        return dict(
            tier=val("#f-tier"),
            kind=val("#f-kind"),
            category=val("#f-category"),
            agent=self.query_one("#f-agent", Input).value.strip() or None,
            user=self.query_one("#f-user", Input).value.strip() or None,
        )

    def search(self, query: str) -> None:
        self.query_one("#query", Input).value = query
        self.post_message(self.SearchSubmitted(query))

    @on(Input.Submitted, "#query, #f-agent, #f-user")
    def _submitted(self) -> None:
        self.post_message(self.SearchSubmitted(self.query_one("#query", Input).value))

    @on(Select.Changed)
    def _filter_changed(self) -> None:
        if self.query_one("#query", Input).value.strip():
            self.post_message(self.SearchSubmitted(self.query_one("#query", Input).value))

    @on(SearchSubmitted)
    def _run(self, event: SearchSubmitted) -> None:
        try:  # the one filter language (#27): keys filter, the other words are the query
            f = parse_filter(event.query, "search")
        except FilterError as exc:
            self.query_one("#search-status", Static).update(str(exc))
            return
        self.query_one("#search-status", Static).update("searching…")
        self.run_search(f.query, {**self.widget_filters(), **f.kwargs()})

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.query")
    def run_search(self, query: str, filters: dict) -> None:
        t0 = perf_counter()
        result = self.engine.search(query, k=self.K, record_access=False, **filters)
        ms = (perf_counter() - t0) * 1000
        writers = self.engine.audit.writers([h.id for h in result.hits])
        if not self.known_agents:  # for the filter's completion (agent:at -> agent:atlas), once
            self.known_agents = self.engine.rules.facets().boot_agents
        hidden: list[Hidden] = []
        if result.query.strip() and needs_wide(filters):  # what the filters hide that ranks higher
            wide = self.engine.search(query, k=self.K, tier="all", mode=result.mode, record_access=False)
            hidden = hidden_stronger(result, wide, filters)
        self.deliver(self.post_message, self.SearchFinished(result, ms, filters, writers, hidden))

    @on(SearchFinished)
    def _show(self, event: SearchFinished) -> None:
        res = event.result
        self.result = res
        self.searched_filters = event.filters
        self.writers = event.writers
        self.hits = {str(h.id): h for h in res.hits}
        self.query_one("#query", FilterInput).set_known(
            agent={*self.known_agents, *(h.agent for h in res.hits if h.agent)},
            user={h.user for h in res.hits if h.user},
        )
        self.marked = [m for m in self.marked if str(m) in self.hits]
        rows = []
        for i, h in enumerate(res.hits, 1):
            b = h.breakdown
            cut = one_line(h.content, CELL_MAX)  # the flexible column cuts it to the free width
            cell: str | Text = cut
            if h.weak:
                cell = Text.assemble(
                    ("weak · ", "italic"), cut, style="dim", no_wrap=True, overflow="ellipsis"
                )
            rows.append(
                (
                    h.id,
                    [
                        "✓" if h.id in self.marked else "",
                        i,
                        h.id,
                        h.tier,
                        one_line(h.agent or "–", 12),
                        cell,
                        f"{b.final:.4f}",
                        _fmt(b.bm25_rank, "d"),
                        _fmt(b.vector_rank, "d"),
                        _fmt(b.vector_similarity),
                        _fmt(b.strength),
                        _fmt(b.importance, ".2f"),
                        _fmt(b.recency),
                    ],
                )
            )
        table = self.query_one("#results", DataGrid)
        table.set_rows(rows)
        self._show_marks()
        status = f"{len(res.hits)} hits · {res.mode}"
        if res.message:
            status += f" · {res.message}"
        if res.keyword_scope:
            status += " · keyword: " + "; ".join(res.keyword_scope)
        if event.hidden:
            status += " · " + hidden_text(event.hidden)
        if self.has_class("-compact") and not self.query_one("#hit-detail").display:
            status += " · d: breakdown"
        self.query_one("#search-status", Static).update(status)
        elsewhere = self._elsewhere_text(res)
        self.query_one("#elsewhere", Static).update(elsewhere)
        self.query_one("#elsewhere").display = bool(elsewhere)
        self._show_detail(table.selected_key)
        if res.hits and self.app.focused is self.query_one("#query", Input):
            table.focus()  # keys act on the hits now (p, i, a, f, o, w); / returns here

    def _elsewhere_text(self, res: SearchResult) -> str:
        e = res.elsewhere or {}
        parts = []
        if "other_tiers" in e:
            o = e["other_tiers"]
            parts.append(
                f"{o['matches']} match(es) in {', '.join(o['tiers'])} "
                f"(tier filter: all tiers) e.g. #{', #'.join(map(str, o['ids'][:3]))}"
            )
        if "without_filters" in e:
            parts.append(f"{e['without_filters']['matches']} match(es) without the filters")
        if "messages" in e:
            m = e["messages"]
            parts.append(f"{m['matches']} message(s) in sessions {', '.join(m['sessions'][:3])} (pane 1)")
        return ("elsewhere: " + " │ ".join(parts)) if parts else ""

    @on(DataGrid.RowHighlighted, "#results")
    def _highlighted(self, event: DataGrid.RowHighlighted) -> None:
        self._show_detail(event.row_key.value if event.row_key else None)

    def _show_detail(self, key: str | None) -> None:
        hit = self.hits.get(key or "")
        if hit is None:
            self.query_one("#breakdown", Static).update("")
            self.query_one("#hit-text", Static).update("")
            return
        best = max((h.breakdown.rrf for h in self.hits.values()), default=None)
        self.query_one("#breakdown", Static).update(breakdown_text(hit.breakdown, best))
        t = Text()
        t.append(f"#{hit.id} ", style="bold")
        t.append(
            f"{hit.kind} · {hit.category} · {hit.tier} · agent {hit.agent or '–'}"
            f" (written by {self.writers.get(hit.id) or '?'}) · user {hit.user or '–'}\n",
            style="dim",
        )
        ss = self.engine.settings.search
        t.append(weight_formula(ss) + "\n", style="dim")
        t.append("      = " + weight_numbers(hit.breakdown, ss) + "\n", style="cyan")
        t.append(hit.content)
        self.query_one("#hit-text", Static).update(t)
        self.query_one("#hit-detail").border_title = f"breakdown #{hit.id}"

    def refresh_data(self) -> None:
        super().refresh_data()
        if self.result is not None:  # re-run the same search; the table keeps its cursor
            self.run_search(self.result.query, self.filters())

    def embedder_changed(self, state: str) -> None:
        self.query_one("#mode-badge", Static).update(badge(state))

    # -- why not? ---------------------------------------------------------------------------------------
    # -- the layout: a short terminal keeps the results, the detail panel on `d` ----------------------
    COMPACT_BELOW = 32  # rows of the pane: fewer, and the breakdown and why-not bar fold away

    def on_resize(self) -> None:
        self.set_class(self.size.height < self.COMPACT_BELOW, "-compact")

    def action_toggle_detail(self) -> None:
        shown = self.query_one("#hit-detail").display
        self.set_class(shown, "-detail-off")
        self.set_class(not shown, "-detail-on")

    def action_why_not(self) -> None:
        self.add_class("-why")
        field = self.query_one("#whynot", Input)
        if self.selected_id() is not None and not field.value:
            field.value = str(self.selected_id())
        field.focus()

    @on(Input.Submitted, "#whynot")
    def _why(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            return
        self.query_one("#why-result", Static).update("explaining…")
        if self.result is None:  # nothing searched yet: the query as typed, the filters as set
            words = self.query_one("#query", FilterInput).filter.query
            self.explain(words, event.value.strip(), None, self.filters())
        else:  # the search the operator ran: its query, mode and filters
            res = self.result
            self.explain(res.query, event.value.strip(), res.mode, self.searched_filters)

    @work(thread=True, exclusive=True, exit_on_error=False, group="search.explain")
    def explain(self, query: str, memory_id: str, mode: str | None, filters: dict) -> None:
        ex = self.engine.explain(query, typed_id(memory_id), k=self.K, mode=mode, **filters)
        self.deliver(self._show_explanation, ex)

    def _show_explanation(self, ex: Explanation) -> None:
        self.query_one("#why-result", Static).update(Text(ex.summary))

    def commands(self) -> list[PaneCommand]:
        return [
            PaneCommand("Pin / unpin selected hit", "Toggle pinned on the selected memory", self.action_pin),
            PaneCommand("Set importance of selected hit", "0–1", self.action_importance),
            PaneCommand(
                "Archive selected hit", "Move it to the archived tier (confirmed)", self.action_archive
            ),
            PaneCommand(
                "Restore selected hit", "An archived memory back to active (confirmed)", self.action_restore
            ),
            PaneCommand("Forget selected hit", "Open Forget & Audit pre-filled", self.action_forget),
            PaneCommand("Add a memory", "Content, kind, category, agent, importance", self.action_new_memory),
            PaneCommand("Edit selected hit's text", "Audited; re-embedded", self.action_edit_memory),
            PaneCommand("Open source message", "Jump to the message it came from", self.action_source),
            PaneCommand(
                "Pin a retrieval check on selected hit",
                "This search must keep it in the top k (confirmed; curator)",
                self.action_pin_check,
            ),
            PaneCommand(
                "Why not? (explain a memory id)",
                "Why a memory is or is not in the results",
                self.action_why_not,
            ),
        ]
