"""The status header: database path, counts, the console's actor and the embedder's state."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from console.text_safety import visible

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
        self.embedder_state = "idle"
        self._draw()

    def set_counts(self, counts) -> None:
        self.counts = counts
        self._draw()

    def set_embedder(self, state: str) -> None:
        self.embedder_state = state
        self._draw()

    def _draw(self) -> None:
        # Badge and counts first: a long database path is what gets cut on a narrow terminal.
        t = Text()
        t.append_text(badge(self.embedder_state))
        t.append(" ")
        c = self.counts
        if c is None:
            t.append("counting…", style="dim")
        else:
            tiers = c.memories_by_tier
            t.append(
                f"core {tiers.get('core', 0):,} · active {tiers.get('active', 0):,} · "
                f"archived {tiers.get('archived', 0):,} │ sessions {c.sessions:,} │ "
                f"rules {c.rules:,} │ proposals {c.pending_proposals:,} │ "
                f"forget open {c.open_forget_requests:,}"
            )
        t.append(" │ ")
        t.append(visible(_home(self.db_path), one_line=True), style="bold")
        t.append(f" as {visible(self.actor, one_line=True)}", style="dim")  # --actor is typed text
        self.update(t)


def _home(path: str) -> str:
    import os

    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home not in ("", "/") and path.startswith(home + os.sep) else path
