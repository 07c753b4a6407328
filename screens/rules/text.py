"""The Rules pane's text: the selected rule's detail and the day / age cells (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from console.app.widgets import charts
from console.app.widgets.fmt import CELL_MAX, one_line
from engine.clock import DAY, iso
from engine.lifecycle.decay import band
from engine.lifecycle.types import Rule, RuleDetail
from screens.lifecycle_marks import Marks

DIM = {"retired": "bright_black"}


def day(t: float | None) -> str:
    return (iso(t) or "–")[:10]


def ago(now: float, t: float | None) -> str:
    if t is None:
        return "never"
    d = (now - t) / DAY
    return "today" if d < 1 else f"{d:.0f} d ago"


def info_text(d: RuleDetail, now: float) -> Text:
    r = d.rule
    t = Text()
    t.append(f"#{r.id} ", style="bold")
    t.append(r.text + "\n")
    t.append("score ", style="dim")
    t.append(f"{r.score:.1f} ", style=charts.band_style(r.score))
    t.append_text(charts.status_text(r.status))
    t.append(f" · agent {r.agent or '(all)'} · domain {r.domain or '–'}{' · pinned' if r.pinned else ''}\n")
    t.append(f"source {r.source} · created {day(r.created_at)} · violations {r.violations}\n")
    t.append(f"last reinforced {day(r.last_reinforced_at)} ({d.days_since_reinforced:.0f} d ago)\n")
    p = d.projection
    if p.frozen:
        t.append("holds: it does not decay on its own (critical, pinned or retired)\n", style="dim")
    elif p.crosses_at is not None:
        t.append(
            f"retires in {(p.crosses_at - now) / DAY:.0f} d ({day(p.crosses_at)}) unless reinforced\n",
            style="yellow",
        )
    else:
        t.append(f"stays above retirement for 30 d (→ {p.points[-1].value:.1f})\n", style="dim")
    for h in d.history[-5:][::-1]:
        old = "new" if h.old_score is None else f"{h.old_score:g}"
        reason = h.reason if len(h.reason) <= 28 else h.reason[:27] + "…"
        t.append(f"{day(h.at)} {old}→{h.new_score:g} {reason} ({h.actor})\n", style="dim")
    return t


def retire_text(r: Rule) -> str:
    who = f"agent {r.agent}" if r.agent else "every agent"
    return (
        f"Rule #{r.id}: status {r.status} → retired (score stays {r.score:g}).\n\n"
        f"“{r.text[:200]}”\n\nIt stops loading at boot for {who} and no longer decays. "
        f"Nothing is deleted: v revives it (score at least 5)."
    )


def score_change_text(r: Rule, s: float, why: str) -> str:
    new_status = r.status if r.pinned else band(s)
    change = f"status {r.status} → {new_status}" if new_status != r.status else f"status stays {r.status}"
    return (
        f"Rule #{r.id}: score {r.score:g} → {s:g}; {change}"
        f"{' (pinned: status does not follow the score)' if r.pinned else ''}.\n\n"
        f"“{r.text[:200]}”\n\nReason: {why}\nDecay counts from now."
    )


def rule_rows(rules: Sequence[Rule], now: float, marks: Marks) -> list[tuple[int, list[Any]]]:
    """The rules table's rows (the id cell carries the mark)."""
    rows: list[tuple[int, list[Any]]] = []
    for r in rules:
        text = r.text.replace("\n", " ")
        rows.append(
            (
                r.id,
                [
                    marks.cell(str(r.id), r.id),
                    charts.score_text(r.score),
                    charts.status_text(r.status),
                    Text(
                        one_line(text, CELL_MAX),
                        style=DIM.get(r.status, ""),
                        no_wrap=True,
                        overflow="ellipsis",
                    ),
                    r.violations or "",
                    ago(now, r.last_reinforced_at),
                    "●" if r.pinned else "",
                    r.agent or "(all)",
                    r.domain or "–",
                ],
            )
        )
    return rows
