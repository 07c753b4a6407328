"""What one redraw of the Decay pane shows (DecayView, gathered by one worker), the chart field's
parser, the forecast table's rows, and what a decay pass says it did or will do."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text

from console.app.widgets import charts
from console.app.widgets.fmt import CELL_MAX, one_line
from engine.clock import DAY, iso
from engine.lifecycle.types import (
    DecayCurve,
    DecayPassResult,
    Forecast,
    ForecastTimeline,
    StrengthDistribution,
)


@dataclass
class DecayView:
    """Everything one redraw needs, gathered by one worker."""

    now: float
    offset_days: int
    horizon: int
    rates: dict | None  # what-if half-lives (days), None when unchanged
    forecast: Forecast  # with the what-if rates, if any
    timeline: ForecastTimeline  # at the configured rates
    what_if_timeline: ForecastTimeline | None
    distribution: StrengthDistribution
    memory_curves: list[tuple[DecayCurve, DecayCurve | None]] = field(default_factory=list)  # real, what-if
    rule_curves: list[DecayCurve] = field(default_factory=list)
    chosen: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def parse_chosen(text: str) -> tuple[list[str], list[str]]:
    """'m3 r5 12' -> (['m3', 'r5', 'm12'], bad tokens). A bare number is a memory."""
    keys, bad = [], []
    for tok in text.replace(",", " ").split():
        t = tok.lower()
        kind, num = (t[0], t[1:]) if t[0] in "mr" else ("m", t)
        if num.isdigit():
            key = f"{kind}{int(num)}"
            if key not in keys:
                keys.append(key)
        else:
            bad.append(tok)
    return keys, bad


def forecast_rows(v: DecayView) -> list:
    """The forecast table's rows: every memory and rule that crosses within the horizon."""
    rows = []
    chosen = set(v.chosen)
    for m in v.forecast.memories:
        key = f"m{m.id}"
        rows.append(
            (
                key,
                [
                    "●" if key in chosen else "",
                    key,
                    m.kind,
                    m.agent or "–",
                    f"{m.strength_now:.2f}",
                    f"{m.strength_then:.2f}",
                    (iso(m.crosses_at) or "")[:10],
                    f"{(m.crosses_at - v.now) / DAY:.1f} d"
                    if m.crosses_at > v.now
                    else Text("overdue", style="yellow"),
                    Text(m.preview, style="dim", no_wrap=True, overflow="ellipsis"),
                ],
            )
        )
    for r in v.forecast.rules:
        key = f"r{r.id}"
        rows.append(
            (
                key,
                [
                    "●" if key in chosen else "",
                    key,
                    "rule",
                    r.agent or "(all)",
                    charts.score_text(r.score_now),
                    charts.score_text(r.score_then),
                    "",
                    "",
                    Text(
                        f"{r.status_now} → {r.status_then} · {one_line(r.text, CELL_MAX)}",
                        style=charts.STATUS_STYLES.get(r.status_then, ""),
                        no_wrap=True,
                        overflow="ellipsis",
                    ),
                ],
            )
        )
    return rows


def decay_summary(r: DecayPassResult) -> str:
    """One line: what a pass changed (or, for a dry run, would change)."""
    return (
        f"{r.memories_archived} memories archived, {r.memories_scheduled} scheduled, "
        f"{r.rules_demoted} rules demoted, {r.rules_retired} retired, {r.rules_decayed} rules lose score"
    )


def decay_preview_text(r: DecayPassResult) -> str:
    """The confirmation's body: exactly what the pass at the engine clock will write."""
    ids = ", ".join(f"m{i}" for i in r.archived_ids[:12])
    more = "…" if r.archived_ids_truncated or len(r.archived_ids) > 12 else ""
    rules = ", ".join(f"r{i}" for i in (r.demoted_rule_ids + r.retired_rule_ids)[:12])
    lines = [
        f"As of {iso(r.now)} (the real clock, not the preview):",
        f"• {r.memories_archived} memories move to the archived tier" + (f" ({ids}{more})" if ids else ""),
        f"• {r.rules_demoted + r.rules_retired} rules change score band "
        f"({r.rules_demoted} demoted, {r.rules_retired} retired)" + (f": {rules}" if rules else ""),
        f"• {r.rules_decayed} rules lose their daily score; "
        f"{r.memories_scheduled} memories get an archive date",
        "The pass is audited. Archived memories can be restored (memory restore ID).",
    ]
    if not (r.memories_archived or r.rules_decayed or r.memories_scheduled):
        lines.insert(1, "Nothing would change.")
    return "\n".join(lines)
