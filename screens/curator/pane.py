"""Pane 5 — Curator: the proposal queue by kind and state; a proposal's members beside its
proposed survivor (a word diff) with the similarity evidence; approve (optionally editing the
survivor), reject with a reason, undo an applied one; run the curator (dry run or real) with
progress; the latest run's report. Marking and deciding many at once: bulk.py."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import ProgressBar, Select

from console.app.widgets.filter_input import FilterHint, FilterInput
from console.app.widgets.safe import SafeStatic as Static  # data, never raw controls or markup
from console.app.widgets.table import DataGrid
from console.shared.text_safety import visible
from engine.curator.impact import ImpactRow
from engine.curator.plan import ApplyPlan, UndoPlan
from engine.curator.types import (
    PROPOSAL_KINDS,
    PROPOSAL_STATUSES,
    CuratorRun,
    Proposal,
    ProposalDetail,
    ProposalRow,
)
from screens.base import Pane, PaneCommand

from .bulk import CuratorBulk
from .confirm import PlanConfirm
from .text import (
    MARK,
    impact_text,
    proposal_text,
    row_cells,
    run_text,
)
from .text import word_diff as word_diff  # re-exported (tests)


class CuratorPane(CuratorBulk):
    PANE_ID = "curator"
    TITLE = "Curator"
    FILTER_SELECTOR = "#curator-filter"
    MAIN_SELECTOR = "#proposals"

    BINDINGS = [
        *Pane.BINDINGS,
        Binding("space", "mark", "Mark", id="curator.mark"),
        Binding("A", "approve_many", "Approve marked", id="curator.approve_many"),
        Binding("X", "reject_many", "Reject marked", id="curator.reject_many"),
        Binding("a", "approve", "Approve", id="curator.approve"),
        Binding("e", "approve_edit", "Edit+approve", id="curator.approve_edit"),
        Binding("x", "reject", "Reject", id="curator.reject"),
        Binding("S", "reject_stale", "Reject stale", id="curator.reject_stale"),
        Binding("i", "impact", "Impact", id="curator.impact"),
        Binding("u", "undo", "Undo applied", id="curator.undo"),
        Binding("r", "run(False)", "Run curator", id="curator.run"),
        Binding("D", "run(True)", "Dry run", id="curator.dry_run"),
        Binding("v", "view_report", "Report", id="curator.report"),
    ]

    @dataclass
    class CuratorFinished(Message):
        run: CuratorRun

    def __init__(self) -> None:
        super().__init__()
        self.detail: ProposalDetail | None = None
        self.report_text: str | None = None
        self.shown: list[Proposal] = []  # the rows the current filter shows, in order
        self.marked: list[int] = []  # proposal ids marked with space
        self.agents: list[str] = []  # the agent select's options
        self.stale_why: dict[int, str] = {}  # shown pending proposals approval would refuse: why

    def compose(self) -> ComposeResult:
        with Horizontal(id="curator-bar"):
            yield Select(
                [(s, s) for s in PROPOSAL_STATUSES], value="pending", prompt="any state", id="c-status"
            )
            yield Select([(k, k) for k in PROPOSAL_KINDS], prompt="any kind", id="c-kind")
            yield Select([], prompt="any agent", id="c-agent")
            yield Static(
                "a approve · x reject · space mark · A/X: the marked (or all shown) · S reject stale"
                " · u undo · r run",
                classes="hint",
                id="curator-keys",
            )
        yield FilterInput(
            "curator",
            hint="#curator-filter-hint",
            placeholder="filter proposals: words status: kind: agent: since: until:",
            id="curator-filter",
        )
        yield FilterHint(id="curator-filter-hint")
        with Horizontal(id="curator-progress-row"):
            yield Static("", id="curator-progress-label")
            yield ProgressBar(total=None, show_eta=False, id="curator-progress")
        with Horizontal(id="curator-main"):
            yield DataGrid(id="proposals", flex_column="text", flex_min=20)
            with VerticalScroll(id="proposal-detail", classes="panel"):
                yield Static("Select a proposal.", id="proposal-text")
        with VerticalScroll(id="curator-run", classes="panel"):
            yield Static("", id="run-summary")

    def on_mount(self) -> None:
        t = self.table("#proposals")
        t.add_column(MARK, key="mark")
        t.add_columns("id", "kind", "text", "state", "agent", "members", "evidence", "created")
        t.border_title = "proposals"
        self.query_one("#proposal-detail").border_title = "proposal"
        self.query_one("#curator-run").border_title = "latest run"
        self.query_one("#curator-progress-row").display = False

    # -- queue --------------------------------------------------------------------------------------
    def _filters(self) -> dict:
        st, kd = self.query_one("#c-status", Select), self.query_one("#c-kind", Select)
        typed = self.query_one("#curator-filter", FilterInput).filter.kwargs()  # the one language (#27)
        return {
            "status": None if st.is_blank() else st.value,
            "kind": None if kd.is_blank() else kd.value,
            **typed,
        }

    def refresh_data(self) -> None:
        super().refresh_data()
        self.load_queue(self._filters())
        self.load_run()

    @on(Select.Changed)
    @on(FilterInput.Parsed, "#curator-filter")
    def _filter_changed(self) -> None:
        self.load_queue(self._filters())

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator.queue")
    def load_queue(self, filters: dict) -> None:
        rows = self.engine.curator.rows(**filters)
        self.deliver(self._show_queue, rows)

    def _show_queue(self, rows: list[ProposalRow]) -> None:
        t = self.table("#proposals")
        rows = self._by_agent(rows)
        self.shown = [r.proposal for r in rows]
        self.stale_why = {r.proposal.id: r.stale for r in rows if r.stale}
        here = {p.id for p in self.shown}
        self.marked = [m for m in self.marked if m in here]
        t.set_rows((r.proposal.id, row_cells(r, r.proposal.id in self.marked)) for r in rows)
        self._title()
        if t.selected_key:
            self.load_detail(int(t.selected_key))
        else:
            self.detail = None
            self.query_one("#proposal-text", Static).update("No proposals match.")

    def _by_agent(self, rows: list[ProposalRow]) -> list[ProposalRow]:
        """The agent select offers the agents of the rows status and kind show; keep its choice."""
        sel = self.query_one("#c-agent", Select)
        agents = sorted({a for r in rows for a in r.agents if a})
        self.query_one("#curator-filter", FilterInput).set_known(agent=agents)
        if agents != self.agents:
            self.agents = agents
            keep = None if sel.is_blank() else sel.value
            with sel.prevent(Select.Changed):
                sel.set_options([(a, a) for a in agents])
                if keep in agents:
                    sel.value = keep
        if sel.is_blank():
            return rows
        return [r for r in rows if sel.value in r.agents]

    @on(DataGrid.RowHighlighted, "#proposals")
    def _highlighted(self, event: DataGrid.RowHighlighted) -> None:
        if event.row_key and event.row_key.value:
            self.load_detail(int(event.row_key.value))

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator.detail")
    def load_detail(self, pid: int) -> None:
        d = self.engine.curator.get(pid)
        self.deliver(self._show_detail, d)

    def _show_detail(self, d: ProposalDetail) -> None:
        self.detail = d
        self.query_one("#proposal-text", Static).update(proposal_text(d, self.stale_why.get(d.proposal.id)))
        self.query_one("#proposal-detail").border_title = f"proposal #{d.proposal.id}"

    # -- the layout: a short terminal keeps the queue's rows (the latest run shrinks) ---------------------
    COMPACT_BELOW = 30  # rows of the pane (80×24 gives ~19)

    def on_resize(self) -> None:
        self.set_class(self.size.height < self.COMPACT_BELOW, "-compact")

    # -- latest run ---------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="curator.run_info")
    def load_run(self) -> None:
        run = self.engine.curator.latest_run()
        report = self.engine.curator.latest_report()
        self.deliver(self._show_run, run, report)

    def _show_run(self, run: CuratorRun | None, report: str | None) -> None:
        self.report_text = report
        self.query_one("#run-summary", Static).update(run_text(run))

    # -- deciding --------------------------------------------------------------------------------------
    def _pending(self) -> ProposalDetail | None:
        d = self.detail
        if d is None:
            self.notify("Select a proposal first.", severity="warning", timeout=2)
            return None
        if d.proposal.status != "pending":
            self.notify(f"Proposal #{d.proposal.id} is {d.proposal.status}, not pending.", severity="warning")
            return None
        return d

    def action_approve(self) -> None:
        if (d := self._pending()) is None:
            return
        self.load_plan(d.proposal.id, None)

    def action_approve_edit(self) -> None:
        if (d := self._pending()) is None:
            return
        if d.proposal.kind not in ("merge", "promote"):
            self.notify(f"A {d.proposal.kind} proposal has no text to edit.", severity="warning")
            return
        pid = d.proposal.id
        # The input shows stored text with its control characters spelled out; left as shown,
        # the original text is kept (None), not its escaped spelling.
        shown = visible(d.proposal.survivor_text or "")

        def edited(text: str) -> None:
            keep = text == shown and shown != (d.proposal.survivor_text or "")
            self.load_plan(pid, None if keep else text)

        self.prompt(f"Survivor text for proposal #{pid}:", edited, value=shown)

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator.plan")
    def load_plan(self, pid: int, text: str | None) -> None:
        """The engine's plan of this approval: the dialog shows it, approve executes it."""
        plan = self.engine.curator.plan(pid, text)
        rows = self.engine.curator.impact(pid, text=text)  # on a dry run: nothing is written
        self.deliver(self._confirm_plan, plan, rows)

    def _confirm_plan(self, plan: ApplyPlan, rows: list[ImpactRow]) -> None:
        pid = plan.proposal_id
        title = f"Approve proposal #{pid} ({plan.kind})" + (" with your text" if plan.edited else "") + "?"
        label = "Approve RISKY merge" if plan.risks else "Approve and apply"

        def done(ok: bool | None) -> None:
            if ok:
                self.approve(pid, plan.text if plan.edited else None, plan)

        self.app.push_screen(PlanConfirm(title, plan, confirm_label=label, impact=impact_text(rows)), done)

    def action_impact(self) -> None:
        """`i`: which searches' top k approving the selected proposal would change (dry run)."""
        if (d := self._pending()) is None:
            return
        self.query_one("#proposal-detail").border_title = f"proposal #{d.proposal.id} · impact…"
        self.load_impact(d.proposal.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator.plan")
    def load_impact(self, pid: int) -> None:
        rows = self.engine.curator.impact(pid)
        self.deliver(self._show_impact, pid, rows)

    def _show_impact(self, pid: int, rows: list[ImpactRow]) -> None:
        d = self.detail
        if d is None or d.proposal.id != pid:
            return
        body = proposal_text(d, self.stale_why.get(pid))
        body.append("\n\n")
        body.append_text(impact_text(rows))
        self.query_one("#proposal-text", Static).update(body)
        self.query_one("#proposal-detail").border_title = f"proposal #{pid} · impact"

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator.decide")
    def approve(self, pid: int, text: str | None, plan: ApplyPlan | None = None) -> None:
        p = self.engine.curator.approve(pid, text=text, reason="approved from the console", plan=plan)
        self.app.call_from_thread(
            self.notify,
            f"Proposal #{pid} {p.status}" + (f": result #{p.result_id}" if p.result_id else "") + ".",
        )
        self.wrote()

    def action_reject(self) -> None:
        if (d := self._pending()) is None:
            return
        pid = d.proposal.id
        self.prompt(
            f"Reject proposal #{pid}: why? (the reason is recorded)",
            lambda reason: self.reject(pid, reason),
            validate=lambda text: None if text.strip() else "a reason is required",
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator.decide")
    def reject(self, pid: int, reason: str) -> None:
        self.engine.curator.reject(pid, reason)
        self.app.call_from_thread(self.notify, f"Proposal #{pid} rejected.")
        self.wrote()

    def action_undo(self) -> None:
        d = self.detail
        if d is None or d.proposal.status != "applied":
            self.notify("Select an applied proposal to undo (status filter: applied).", severity="warning")
            return
        self.load_undo_plan(d.proposal.id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator.plan")
    def load_undo_plan(self, pid: int) -> None:
        plan = self.engine.curator.undo_plan(pid)
        self.deliver(self._confirm_undo, plan)

    def _confirm_undo(self, plan: UndoPlan) -> None:
        pid = plan.proposal_id

        def done(ok: bool | None) -> None:
            if ok:
                self.undo(pid, plan)

        self.app.push_screen(PlanConfirm(f"Undo proposal #{pid}?", plan, confirm_label="Undo"), done)

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator.decide")
    def undo(self, pid: int, plan: UndoPlan | None = None) -> None:
        self.engine.curator.undo(pid, reason="undone from the console", plan=plan)
        self.app.call_from_thread(self.notify, f"Proposal #{pid} undone.")
        self.wrote()

    # -- running the curator -----------------------------------------------------------------------------
    def action_run(self, dry_run: bool) -> None:
        self.query_one("#curator-progress-row").display = True
        self.query_one("#curator-progress-label", Static).update("dry run…" if dry_run else "running…")
        self.query_one("#curator-progress", ProgressBar).update(total=None, progress=0)
        self.run_curator(dry_run)

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator.running")
    def run_curator(self, dry_run: bool) -> None:
        def progress(stage: str, done: int, total: int) -> None:
            self.deliver(self._progress, stage, done, total)

        run = self.engine.curator.run(dry_run=dry_run, progress=progress)
        self.deliver(self.post_message, self.CuratorFinished(run))
        if not dry_run:
            self.wrote()

    def _progress(self, stage: str, done: int, total: int) -> None:
        self.query_one("#curator-progress-label", Static).update(f"{stage} {done}/{total}")
        self.query_one("#curator-progress", ProgressBar).update(total=max(total, 1), progress=done)

    @on(CuratorFinished)
    def _finished(self, event: CuratorFinished) -> None:
        self.query_one("#curator-progress-row").display = False
        run = event.run
        n = sum(run.counts.get("proposed", {}).values())
        if run.dry_run:
            self.query_one("#run-summary", Static).update(run_text(run))
            self.query_one("#curator-run").border_title = "dry run (nothing written)"
            self.notify(f"Dry run: {n} proposal(s) would be made; nothing was written.")
        else:
            self.query_one("#curator-run").border_title = "latest run"
            self.notify(f"Curator run #{run.id}: {n} new proposal(s).")

    def action_view_report(self) -> None:
        if not self.report_text:
            self.notify("No run report yet (run the curator with r).", timeout=3)
            return
        from console.app.widgets.report import ReportScreen

        self.app.push_screen(ReportScreen("Curator report", self.report_text))

    def commands(self) -> list[PaneCommand]:
        return [
            PaneCommand("Run the curator", "Scan and queue proposals", lambda: self.action_run(False)),
            PaneCommand("Dry-run the curator", "Writes nothing", lambda: self.action_run(True)),
            PaneCommand("Approve selected proposal", "Confirmed; applies at once", self.action_approve),
            PaneCommand("Edit survivor and approve", "Merge/promote text", self.action_approve_edit),
            PaneCommand("Reject selected proposal", "With a reason", self.action_reject),
            PaneCommand("Undo selected applied proposal", "Confirmed", self.action_undo),
            PaneCommand("Approve marked proposals", "Or all shown (risky skipped)", self.action_approve_many),
            PaneCommand("Reject marked proposals", "Or all shown; one reason", self.action_reject_many),
            PaneCommand(
                "Impact of the selected proposal", "Dry run: which searches change", self.action_impact
            ),
            PaneCommand("Reject every stale proposal", "Confirmed; with a reason", self.action_reject_stale),
            PaneCommand("View the latest run report", "Markdown", self.action_view_report),
        ]
