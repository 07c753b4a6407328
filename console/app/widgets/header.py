"""The status header: the embedder's state, counts, and who you are on which database.

Who you are (the verified identity, your role), the database and whether it is read-only are
always shown, whatever the width: at 80 columns they are abbreviated (the file's name instead of
its path, no `--actor` label, `RO`), never cut; the counts and the badge give way first (short
labels, then tiny ones, then none)."""

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


def badge(state: str, short: bool = False) -> Text:
    label, style = BADGES.get(state, (f"keyword-only · {state}", "bold"))
    if short:
        label = "hybrid" if state == "ready" else "kw-only"
    return Text(f" {label} ", style=style)


READ_ONLY_STYLE = "bold white on red"


def read_only_mark(engine) -> str:
    """What the header says of an engine that refuses writes: "read-only replica" on a standby,
    "read-only" when opened so; "" when it writes."""
    if not getattr(engine, "read_only", False):
        return ""
    return "read-only replica" if getattr(engine, "standby", False) else "read-only"


def _mark(read_only: bool | str) -> str:
    if isinstance(read_only, str):
        return read_only
    return "read-only" if read_only else ""


class StatusHeader(Static):
    DEFAULT_CSS = """
    StatusHeader { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    def __init__(
        self, db_path: str, actor: str, role: str = "", read_only: bool | str = False, **kwargs
    ) -> None:
        super().__init__("", **kwargs)
        self.db_path = db_path
        self.actor = actor  # the audit text: `alice` or `alice (as ops-lead)` (engine/identity.py)
        self.role = role
        self.read_only = _mark(read_only)  # "", "read-only" or "read-only replica"
        self.counts = None
        self.failing_checks = 0
        self.rules_by_status: dict[str, int] | None = None
        self.embedder_state = "idle"
        self._draw()

    def set_counts(
        self, counts, rules_by_status: dict[str, int] | None = None, failing_checks: int = 0
    ) -> None:
        self.counts = counts
        self.rules_by_status = rules_by_status
        self.failing_checks = failing_checks  # pinned retrieval checks failing now (pane 8)
        self._draw()

    def set_embedder(self, state: str) -> None:
        self.embedder_state = state
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def set_identity(self, actor: str, role: str, read_only: bool | str) -> None:
        self.actor, self.role, self.read_only = actor, role, _mark(read_only)
        self._draw()

    def _draw(self) -> None:
        room = self.size.width - 2  # the padding
        self.update(self._fitted(room) if room > 0 else self._line(0, 0))

    def _fitted(self, room: int) -> Text:
        """The richest line that fits: (identity level, counts level) in order of preference. The
        identity's shortest form is always there; wide, the full path and the label come back."""
        levels = [(0, 0, 5), (1, 0, 5), (1, 1, 5), (2, 1, 5), (1, 2, 5), (2, 2, 5)]
        levels += [(2, 3, n) for n in (5, 4, 3, 2, 1)] + [(2, 4, 0)]  # tiny counts, the last ones first
        for who, counts, pairs in levels:
            line = self._line(who, counts, pairs)
            if line.cell_len <= room:
                return line
        return self._line(2, 5)

    def _line(self, who: int, counts: int, keep: int = 5) -> Text:
        """`who`: 0 full path + label, 1 file name + label, 2 file name only. `counts`: 0 long
        labels, 1 short, 2 short + short badge, 3 tiny, 4 badge only, 5 nothing but who."""
        t = Text()
        if counts < 5:
            t.append_text(badge(self.embedder_state, short=counts >= 2))
            t.append(" ")
        c = self.counts
        if counts >= 4:
            pass
        elif c is None:
            t.append("counting…", style="dim")
        else:
            pairs = counts_line(c, self.rules_by_status, short=counts >= 1, tiny=counts >= 3)
            if self.failing_checks:  # an alarm: first, so a narrow header never drops it
                pairs.insert(0, ("chk" if counts >= 1 else "checks", f"{self.failing_checks} FAILING"))
            pairs = pairs[:keep]
            for i, (label, value) in enumerate(pairs):
                if i:
                    t.append(" │ " if counts < 3 else " ", style="dim")
                t.append(f"{label} ", style="dim")
                t.append(value)
        if counts < 4:
            t.append(" │ ", style="dim")
        t.append_text(self.identity_text(who))
        return t

    def identity_text(self, level: int = 0) -> Text:
        """`~/mem/test.db · alice (as ops-lead) · curator READ-ONLY`, abbreviated by `level`."""
        from engine.identity import parse_actor

        t = Text()
        path = _home(self.db_path) if level == 0 else _base(self.db_path)
        t.append(visible(path, one_line=True), style="bold")
        who = parse_actor(self.actor)
        t.append(" · ", style="dim")
        t.append(visible(who.verified, one_line=True), style="bold")  # stored or typed text: escaped
        if who.label and level < 2:
            t.append(f" (as {visible(who.label, one_line=True)})", style="dim")
        if self.role:
            t.append(" · ", style="dim")
            t.append(self.role)
        if self.read_only:
            t.append(" ")
            short = "REPLICA" if "replica" in self.read_only else "RO"
            t.append(f" {self.read_only.upper()} " if level < 2 else f" {short} ", style=READ_ONLY_STYLE)
        return t

    @property
    def plain(self) -> str:
        """The header as text (tests read it)."""
        rendered = self.render()
        return getattr(rendered, "plain", str(rendered))


def counts_line(
    c, rules_by_status: dict[str, int] | None, short: bool = False, tiny: bool = False
) -> list[tuple[str, str]]:
    """(label, value) pairs, each count named: "rules" "12 active / 80"; `short`: the short labels
    of a narrow terminal, "rules" "12/80" (active/all); `tiny`: "mem" "1/10/1" (core/active/archived)."""
    tiers = c.memories_by_tier
    core, active, archived = (f"{tiers.get(t, 0):,}" for t in ("core", "active", "archived"))
    if rules_by_status:
        total = sum(rules_by_status.values())
        live = f"{total - rules_by_status.get('retired', 0):,}"
        rules = f"{live}/{total:,}" if short else f"{live} active / {total:,}"
    else:
        rules = f"{c.rules:,}" if short else f"{c.rules:,} active"
    if tiny:
        return [
            ("mem", f"{core}/{active}/{archived}"),
            ("sess", f"{c.sessions:,}"),
            ("rules", rules),
            ("prop", f"{c.pending_proposals:,}"),
            ("fgt", f"{c.open_forget_requests:,}"),
        ]
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


def _base(path: str) -> str:
    """The database's name: a file's name, or a server URL's database (`postgresql://h/mem` -> mem)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name.split("?", 1)[0] or path
