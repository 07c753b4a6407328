"""Search points at stronger matches it hides (issue #25): the same query over every tier with no
filter; a memory in that search's top n (n: how many the filtered search shows) that the filtered
search left out outranks at least one shown hit. The status line names it, why it was hidden
(archived, or which filter) and what to do (tier: all tiers, then R restores; clear a filter)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.types import Hit, SearchResult

DEFAULT_TIERS = ("core", "active")
FILTERS = ("kind", "category", "agent", "user")
SHOWN = 3  # ids named in the status line


@dataclass(frozen=True)
class Hidden:
    id: int
    why: str  # "archived", "agent", "kind", ... (the filter that hid it)


def needs_wide(filters: dict) -> bool:
    """Whether a filtered search can hide anything (every tier, no filter: it cannot)."""
    return filters.get("tier") != "all" or any(filters.get(f) for f in FILTERS)


def _why(h: Hit, filters: dict) -> str:
    tier = filters.get("tier")
    tiers = DEFAULT_TIERS if tier is None else (() if tier == "all" else tuple(str(tier).split(",")))
    if tiers and h.tier not in tiers:
        return h.tier  # "archived" (or a tier the filter left out)
    for f in FILTERS:
        want = filters.get(f)
        if want and str(getattr(h, f, "") or "") != str(want):
            return f
    return "filters"


def hidden_stronger(shown: SearchResult, wide: SearchResult, filters: dict) -> list[Hidden]:
    """Memories the filters hid that would outrank a shown hit (see the module's docstring)."""
    have = {h.id for h in shown.hits}
    n = len(shown.hits) or len(wide.hits)
    return [Hidden(h.id, _why(h, filters)) for h in wide.hits[:n] if h.id not in have]


def hidden_text(hidden: list[Hidden]) -> str:
    """The status line's part: how many, which, why, and the action."""
    if not hidden:
        return ""
    named = ", ".join(f"#{h.id} {h.why}" for h in hidden[:SHOWN]) + (" …" if len(hidden) > SHOWN else "")
    acts = []
    tiers = {h.why for h in hidden} & {"archived", "core", "active"}
    if tiers:
        acts.append("tier: all tiers, R restores")
    if others := sorted({h.why for h in hidden} - tiers):
        acts.append(f"clear the {', '.join(others)} filter")
    return f"{len(hidden)} stronger hidden: {named} ({'; '.join(acts)})"  # fits 80 columns
