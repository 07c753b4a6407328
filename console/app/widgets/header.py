"""The status header: database path, counts, the console's actor and the embedder's state."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from console.shared.text_safety import visible

# embedder state -> (badge, style). Until the model is ready, search is keyword-only.
BADGES = {
    "ready": ("hybrid", "bold black on green"),
    "loading": ("keyword-only · model loading", "bold black on yellow"),
    "idle": ("keyword-only · model not loaded", "bold black on yellow"),
    "none": ("keyword-only · no model", "bold white on red"),
    "failed": ("keyword-only · model failed", "bold white on red"),
}


def badge(state: str) -> Text:
    label, style = BADGES.get(state, (f"keyword-only · {state}", "bold"))
    return Text(f" {label} ", style=style)


class StatusHeader(Static):
    DEFAULT_CSS = """
    StatusHeader { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    def __init__(self, db_path: str, actor: str, **kwargs) -> None:
        super().__init__("", **kwargs)
        self.db_path = db_path
        self.actor = actor
        self.counts = None
        self.rules_by_status: dict[str, int] | None = None
        self.embedder_state = "idle"
        self._draw()

    def set_counts(self, counts, rules_by_status: dict[str, int] | None = None) -> None:
        self.counts = counts
        self.rules_by_status = rules_by_status
        self._draw()

    def set_embedder(self, state: str) -> None:
        self.embedder_state = state
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        # Badge and counts first: a long database path is what gets cut on a narrow terminal, and
        # when even the counts would not fit (80 columns) they take their short labels.
        # Short labels only on a narrow terminal (under 100 columns, e.g. 80×24), where the long
        # ones would cut the counts themselves; wider, the long labels stay and the path gives way.
        room = self.size.width - 2  # the padding
        compact = 0 < room < 98 and self.counts is not None and self._line(False, path=False).cell_len > room
        self.update(self._line(compact))

    def _line(self, compact: bool, path: bool = True) -> Text:
        t = Text()
        t.append_text(badge(self.embedder_state))
        t.append(" ")
        c = self.counts
        if c is None:
            t.append("counting…", style="dim")
        else:
            pairs = counts_line(c, self.rules_by_status, short=compact)
            for i, (label, value) in enumerate(pairs):
                if i:
                    t.append(" │ ", style="dim")
                t.append(f"{label} ", style="dim")
                t.append(value)
        if not path:
            return t
        t.append(" │ ", style="dim")
        t.append(visible(_home(self.db_path), one_line=True), style="bold")
        t.append(f" · as {visible(self.actor, one_line=True)}", style="dim")  # --actor is typed text
        return t

    @property
    def plain(self) -> str:
        """The header as text (tests read it)."""
        rendered = self.render()
        return getattr(rendered, "plain", str(rendered))


def counts_line(c, rules_by_status: dict[str, int] | None, short: bool = False) -> list[tuple[str, str]]:
    """(label, value) pairs, each count named: "rules" "12 active / 80"; `short`: the short labels
    of a narrow terminal, "rules" "12/80" (active/all)."""
    tiers = c.memories_by_tier
    core, active, archived = (f"{tiers.get(t, 0):,}" for t in ("core", "active", "archived"))
    if rules_by_status:
        total = sum(rules_by_status.values())
        live = f"{total - rules_by_status.get('retired', 0):,}"
        rules = f"{live}/{total:,}" if short else f"{live} active / {total:,}"
    else:
        rules = f"{c.rules:,}" if short else f"{c.rules:,} active"
    if short:
        return [
            ("mem", f"{core} core·{active} act·{archived} arch"),
            ("sess", f"{c.sessions:,}"),
            ("rules", rules),
            ("prop", f"{c.pending_proposals:,}"),
            ("forget", f"{c.open_forget_requests:,}" + _late(c, True)),
        ]
    return [
        ("memories", f"{core} core · {active} active · {archived} archived"),
        ("sessions", f"{c.sessions:,}"),
        ("rules", rules),
        ("proposals", f"{c.pending_proposals:,} pending"),
        ("forget", f"{c.open_forget_requests:,} open" + _late(c, False)),
    ]


def _late(c, short: bool) -> str:
    """Forget deadlines beside the open count (issue #25): overdue cases, or a deadline within a
    week ("2 OVERDUE", "due in 3d"); nothing while every deadline is far."""
    late = getattr(c, "overdue_forget_requests", 0)
    if late:
        return f"·{late} LATE" if short else f" · {late} OVERDUE"
    days = getattr(c, "next_forget_due_days", None)
    if days is not None and days <= 7:
        return f"·{days}d" if short else f" · due in {days}d"
    return ""


def _home(path: str) -> str:
    import os

    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home not in ("", "/") and path.startswith(home + os.sep) else path
