"""The Curator's confirmations: the dialog shows the engine's plan (ApplyPlan / UndoPlan) in
words, and for a merge each member's word diff against the text that will remain and the merge's
risks, in one scrollable body that wraps at 80×24. It is a ConfirmModal (same buttons, same
`title_text` / `body`), so what it says is what `approve(..., plan=...)` executes."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Label

from console.app.widgets.confirm import ConfirmModal, DialogError
from console.app.widgets.safe import SafeStatic
from console.shared.text_safety import visible
from engine.curator.plan import ApplyPlan, UndoPlan

from .text import word_diff


def plan_diff(plan: ApplyPlan) -> Text | None:
    """Each member → the text that remains, word by word (removed struck, added green), and the
    risks; None when nothing is merged or promoted."""
    if plan.text is None:
        return None
    t = Text()
    if plan.risks:
        t.append("⚠ RISKY merge: the remaining text drops what a member says\n", style="bold yellow")
        for r in plan.risks:
            t.append(f"  • {r}\n", style="yellow")
        t.append("\n")
    t.append("word diff: member → what remains\n", style="bold")
    for c in plan.changes:
        mark = " ★ survivor" if c.id == plan.survivor_id else ""
        t.append(f"#{c.id}{mark}\n", style="bold")
        t.append("  ")
        t.append_text(word_diff(c.text, plan.text))
        t.append("\n")
    return t


class PlanConfirm(ConfirmModal):
    """Confirm an approval or an undo from its plan; the body scrolls when it is long."""

    DEFAULT_CSS = """
    PlanConfirm > Vertical { width: 96%; max-width: 120; height: 94%; }
    PlanConfirm #plan-scroll { height: 1fr; }
    PlanConfirm #plan-diff, PlanConfirm #plan-impact { margin-top: 1; }
    """

    def __init__(
        self, title: str, plan: ApplyPlan | UndoPlan, *, confirm_label: str, impact: Text | None = None
    ) -> None:
        super().__init__(title, plan.describe(), confirm_label=confirm_label, danger=_risky(plan))
        self.plan = plan
        self.diff = plan_diff(plan) if isinstance(plan, ApplyPlan) else None
        self.impact = impact

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(visible(self.title_text), id="confirm-title", markup=False)
            with VerticalScroll(id="plan-scroll"):
                yield SafeStatic(self.body, id="confirm-body")
                if self.diff is not None:
                    yield SafeStatic(self.diff, id="plan-diff")
                if self.impact is not None:
                    yield SafeStatic(self.impact, id="plan-impact")
            yield DialogError(id="confirm-error")
            with Horizontal():
                yield Button("Cancel", id="cancel")
                yield Button(self.confirm_label, id="confirm", variant="error" if self.danger else "warning")


def _risky(plan: ApplyPlan | UndoPlan) -> bool:
    return isinstance(plan, ApplyPlan) and bool(plan.risks)
