"""What pane 7 shows of one forget case and of a preview (issue #25): the case's detail (scope,
match mode, deadline, who requested / approved / executed, withdrawal, every verification level's
line), preview rows with the matched words highlighted, and the deadline cell of the cases table.
Rendering only: Rich Text built from engine dataclasses; stored text is made visible by the
DataGrid / SafeStatic that shows it."""

from __future__ import annotations

from rich.text import Text

from console.app.widgets.fmt import one_line, when
from engine.forget.types import ForgetItem, ForgetRequest
from engine.forget.workflow import Due, approved_by, due

KIND_PLURAL = {
    "memory": "memories",
    "message": "messages",
    "rule": "rules",
    "session": "sessions",
    "flow": "flows",
}
OVERDUE_STYLE = "bold reverse red"  # the word "OVERDUE" carries it too: never colour alone


def counts_text(counts: dict) -> str:
    shown = [f"{v} {k.replace('_', ' ')}" for k, v in counts.items() if isinstance(v, int) and v]
    return ", ".join(shown) if shown else "nothing"


def per_kind(items: list[ForgetItem]) -> str:
    """ "2 memories · 1 rule": how many preview rows of each kind."""
    n: dict[str, int] = {}
    for it in items:
        n[it.kind] = n.get(it.kind, 0) + 1
    return " · ".join(f"{v} {KIND_PLURAL.get(k, k) if v != 1 else k}" for k, v in n.items()) or "nothing"


def marked_text(item: ForgetItem) -> Text:
    """The preview's text with the query's matched words highlighted (bold, underlined, reversed:
    it shows without colour too)."""
    t = Text(one_line(item.preview, 2000), end="", overflow="ellipsis", no_wrap=True)
    for a, b in item.marks:
        t.stylize("bold underline reverse", a, b)
    return t


def due_cell(c: ForgetRequest, now: float) -> Text:
    d = due(c, now)
    if d.overdue:
        return Text(f"OVERDUE {d.text[len('overdue ') :]}", style=OVERDUE_STYLE)
    return Text(d.text, style="dim" if d.days_left is None else "")


def cases_title(cases: list[ForgetRequest], now: float) -> str:
    """The cases table's title: every case, the open ones, the overdue ones, the next deadline."""
    dues = [due(c, now) for c in cases]
    open_dues = [d for d in dues if d.days_left is not None]
    parts = [f"{len(cases)}"]
    if open_dues:
        parts.append(f"{len(open_dues)} open")
    late = sum(d.overdue for d in dues)
    if late:
        parts.append(f"{late} OVERDUE")
    soon = [d for d in open_dues if not d.overdue]
    if soon:
        parts.append("next due: " + min(soon, key=lambda d: d.days_left or 0).text)
    return f"forget cases ({' · '.join(parts)})"


def detail(c: ForgetRequest, now: float, notes: bool = True) -> Text:
    """Everything about one case, one fact per line, the verification's levels first (so an 80x24
    terminal shows every level's line without scrolling); `notes`: what each level checked (wide
    terminals; the panel scrolls anyway)."""
    t = Text()
    t.append(f"case #{c.id} ", style="bold")
    t.append(c.status.upper() if c.status == "withdrawn" else c.status, style="bold")
    d: Due = due(c, now)
    if d.days_left is not None:
        t.append(" · ")
        t.append(f"OVERDUE ({d.text})" if d.overdue else d.text, style=OVERDUE_STYLE if d.overdue else "")
        t.append(f" · deadline {when(c.deadline)}")
    if c.residue is not None:
        t.append(" · ")
        t.append(f"residue {c.residue}", style="bold green" if c.residue == 0 else "bold red")
        if c.status == "executed":
            t.append(" — not verified", style="bold")
    said = c.counts.get("level_notes") if isinstance(c.counts.get("level_notes"), dict) else {}
    for name, line in (c.counts.get("levels") or {}).items():  # what each level found, and checked
        t.append(f"\n  {name}: ", style="bold")
        bad = str(line).startswith("residue")
        t.append(str(line), style="green" if line == "clean" else "bold red" if bad else "dim")
        note = (said or {}).get(name)
        if notes and note and note != line:
            t.append(f" — {note}", style="dim")
    for h in c.counts.get("residue_at") or []:  # where the residue lies (a file database)
        at = f"\n  residue at {h.get('file')} offset {h.get('offset')}"
        at += f", page {h['page']}" + (f" of {h['table']}" if h.get("table") else "") if h.get("page") else ""
        t.append(at, style="red")
        if h.get("shared_with"):
            t.append(f": {h['shared_with']} (outside the case)", style="bold")
    if c.counts.get("residue_at") and c.status == "executed" and not c.workflow.get("residue_accepted"):
        t.append("\n  widen the case, or press A to accept the residue with a reason", style="dim")
    acc = c.workflow.get("residue_accepted")
    if isinstance(acc, dict):
        why = one_line(str(acc.get("reason", "")), 200)
        t.append(f"\nresidue accepted by {acc.get('by')} {when(acc.get('at'))}: {why}")
    who = f"\nrequested by {c.requested_by} {when(c.requested_at)}"
    approvers = approved_by(c)
    if approvers:
        who += f" · approved by {', '.join(approvers)}"
    ex = c.workflow.get("executed_by")
    if isinstance(ex, dict) and ex.get("by"):
        who += f" · executed by {ex['by']} {when(ex.get('at'))}"
    t.append(who)
    w = c.workflow.get("withdrawn")
    if isinstance(w, dict):
        t.append(
            f"\nwithdrawn by {w.get('by')} {when(w.get('at'))}: {one_line(str(w.get('reason', '')), 200)}"
        )
    match = c.workflow.get("match")
    t.append(
        f"\nscope {c.scope_kind} {one_line(c.scope_value, 60)}" + (f" · match: {match}" if match else "")
    )
    t.append(f"\nreason: {one_line(c.reason, 200)}")
    dropped = c.workflow.get("excluded")
    if isinstance(dropped, dict) and dropped:
        t.append(
            "\ndropped from the scope: "
            + ", ".join(f"{k} {', '.join(map(str, v))}" for k, v in dropped.items())
        )
    if c.counts:
        t.append(f"\nremoves: {counts_text(c.counts)}")
    return t
