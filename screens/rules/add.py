"""The Rules pane's "add a rule" dialog: text, score 0–10, agent, domain. Invalid input (no text,
a score that is not a number from 0 to 10) shows inline and the dialog stays open; `enter` in any
field or the Add button submits, `escape` cancels."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

from console.app.widgets.confirm import DialogError, number_between, required


@dataclass
class NewRule:
    text: str
    score: float
    agent: str
    domain: str


class AddRuleModal(ModalScreen[NewRule | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="rule_add.cancel")]
    DEFAULT_CSS = """
    AddRuleModal { align: center middle; }
    AddRuleModal > Vertical {
        width: 76; height: auto; padding: 1 2; border: thick $accent; background: $surface;
    }
    AddRuleModal #rule-add-title { text-style: bold; margin-bottom: 1; }
    AddRuleModal Horizontal { height: auto; }
    AddRuleModal .rule-add-label { width: 10; padding-top: 1; }
    AddRuleModal Horizontal Input { width: 1fr; }
    AddRuleModal #rule-add-buttons { align-horizontal: right; margin-top: 1; }
    AddRuleModal Button { margin-left: 2; }
    """

    def __init__(self, agent: str = "", domain: str = "") -> None:
        super().__init__()
        self.agent, self.domain = agent, domain
        self._errored: tuple[str, ...] = ()  # the fields as they were when the error was shown

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Add a rule (its status follows its score's band)", id="rule-add-title")
            for label, wid, value, hint in (
                ("text", "rule-add-text", "", "what the agent must do or avoid"),
                ("score", "rule-add-score", "5", "0–10 (9+ critical, 5+ active)"),
                ("agent", "rule-add-agent", self.agent, "empty: every agent"),
                ("domain", "rule-add-domain", self.domain, "empty: global"),
            ):
                with Horizontal():
                    yield Label(label, classes="rule-add-label")
                    yield Input(value, placeholder=hint, id=wid)
            yield DialogError(id="rule-add-error")
            with Horizontal(id="rule-add-buttons"):
                yield Button("Cancel", id="rule-add-cancel")
                yield Button("Add rule", id="rule-add-ok", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#rule-add-text", Input).focus()

    def _value(self, wid: str) -> str:
        return self.query_one(f"#{wid}", Input).value.strip()

    def _values(self) -> tuple[str, ...]:
        return tuple(i.value for i in self.query(Input))

    @on(Input.Changed)
    def _typed(self) -> None:
        if self._values() != self._errored:  # an edit since the error: clear it
            self.query_one(DialogError).show("")

    @on(Input.Submitted)
    @on(Button.Pressed, "#rule-add-ok")
    def submit(self) -> None:
        text, score = self._value("rule-add-text"), self._value("rule-add-score")
        error = required("the rule's text")(text) or number_between(0, 10, "score")(score)
        if error:  # the dialog stays open, the fields kept for a fix
            self._errored = self._values()
            self.query_one(DialogError).show(error)
            return
        self.dismiss(
            NewRule(text, float(score), self._value("rule-add-agent"), self._value("rule-add-domain"))
        )

    @on(Button.Pressed, "#rule-add-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
