"""The curator pane's marks and decisions on many proposals at once: space marks a row, A approves
and X rejects the marked rows (or every row the filter shows), S rejects every stale one shown.
CuratorPane (pane.py) inherits these; the queue's state they act on is the pane's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.message import Message

from engine.curator.bulk import BulkOutcome
from engine.curator.types import Proposal
from screens.base import Pane

from .text import MARK, bulk_body, bulk_result, bulk_targets, bulk_title, stale_body, stale_title


class CuratorBulk(Pane):
    """What the curator pane does with marked rows; the pane fills `shown`, `marked`, `stale_why`."""

    shown: list[Proposal]  # the rows the current filter shows, in order
    marked: list[int]  # proposal ids marked with space
    stale_why: dict[int, str]  # shown pending proposals approval would refuse: why

    if TYPE_CHECKING:  # the pane's own (pane.py)

        def load_queue(self, filters: dict) -> Any: ...
        def _filters(self) -> dict: ...

    @dataclass
    class BulkDecided(Message):
        verb: str
        outcomes: list[BulkOutcome]

    # -- marking and deciding many ---------------------------------------------------------------------
    def _title(self) -> None:
        marked = f" · {len(self.marked)} marked" if self.marked else ""
        stale = f" · {len(self.stale_why)} stale" if self.stale_why else ""
        self.table("#proposals").border_title = f"proposals ({len(self.shown)}){marked}{stale}"

    def action_mark(self) -> None:
        """`space`: mark or unmark the selected row (A / X act on the marked rows)."""
        t = self.table("#proposals")
        key = t.selected_key
        if key is None:
            return
        pid = int(key)
        if pid in self.marked:
            self.marked.remove(pid)
        else:
            self.marked.append(pid)
        t.update_cell(key, "mark", MARK if pid in self.marked else "")
        self._title()
        if t.cursor_row < t.row_count - 1:
            t.move_cursor(row=t.cursor_row + 1)

    def _bulk_targets(self, verb: str) -> tuple[list[Proposal], int, int, int] | None:
        approve = verb == "approve"
        got = bulk_targets(
            self.shown, self.marked, skip_risky=approve, stale=self.stale_why if approve else None
        )
        if not got[0]:
            why = "; risky merges: mark them with space" if got[2] else ""
            why += f"; {got[3]} stale: S rejects them" if got[3] else ""
            self.notify(
                f"Nothing to {verb}: no pending proposal is marked or shown{why}.", severity="warning"
            )
            return None
        return got

    def action_approve_many(self) -> None:
        """`A`: approve the marked rows (or every row the filter shows but risky merges), after one
        confirmation."""
        if (got := self._bulk_targets("approve")) is None:
            return
        props, left_out, risky, stale = got
        ids = [p.id for p in props]
        self.confirm(
            bulk_title("Approve", props),
            bulk_body("Approve and apply", props, left_out, bool(self.marked), risky, stale),
            lambda: self.decide_many("approve", ids, "approved from the console (bulk)"),
            confirm_label=f"Approve {len(ids)}",
        )

    def action_reject_many(self) -> None:
        """`X`: reject the marked rows (or every row the filter shows) with one reason."""
        if (got := self._bulk_targets("reject")) is None:
            return
        props = got[0]
        ids = [p.id for p in props]
        self.prompt(
            bulk_title("Reject", props) + ". Why? (the reason is recorded on each)",
            lambda reason: self.decide_many("reject", ids, reason),
            validate=lambda text: None if text.strip() else "a reason is required",
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="curator.decide")
    def decide_many(self, verb: str, ids: list[int], reason: str) -> None:
        if verb == "approve":
            outcomes = self.engine.curator.approve_many(ids, reason=reason, include_risky=True)
        elif verb == "reject-stale":
            outcomes = self.engine.curator.reject_stale(reason, ids=ids)
        else:
            outcomes = self.engine.curator.reject_many(ids, reason)
        self.deliver(
            self.post_message, self.BulkDecided("Approved" if verb == "approve" else "Rejected", outcomes)
        )
        self.wrote()

    @on(BulkDecided)
    def _bulk_decided(self, event: BulkDecided) -> None:
        self.marked = []
        self.load_queue(self._filters())  # the marks' cells cleared, decided rows gone
        bad = any(not o.ok for o in event.outcomes)
        self.notify(bulk_result(event.verb, event.outcomes), severity="warning" if bad else "information")

    def action_reject_stale(self) -> None:
        """`S`: reject every stale proposal the filter shows, after a confirmation with the count
        and a reason (recorded on each)."""
        stale = {p.id: self.stale_why[p.id] for p in self.shown if p.id in self.stale_why}
        if not stale:
            self.notify("No stale proposal is shown: nothing to reject.", timeout=3)
            return
        ids = sorted(stale)

        def ask_reason() -> None:
            self.prompt(
                f"Reject {len(ids)} stale proposal(s): why? (recorded on each)",
                lambda reason: self.decide_many("reject-stale", ids, reason),
                value="stale: a member changed since it was proposed",
                validate=lambda text: None if text.strip() else "a reason is required",
            )

        self.confirm(stale_title(len(ids)), stale_body(stale), ask_reason, confirm_label=f"Reject {len(ids)}")
