"""Search filters, applied inside each retriever (never after the limit)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.errors import InvalidInput, cut
from engine.types import KINDS, TIERS

DEFAULT_TIERS = ("core", "active")


@dataclass(frozen=True)
class Filters:
    tiers: tuple[str, ...] = DEFAULT_TIERS
    kind: str | None = None
    category: str | None = None
    agent: str | None = None
    user: str | None = None

    @classmethod
    def make(
        cls,
        tier: Any = None,
        kind: str | None = None,
        category: str | None = None,
        agent: str | None = None,
        user: str | None = None,
    ) -> Filters:
        """From what a caller passes: tier as None (the default tiers), "all", "a,b" or a list."""
        tiers: tuple[str, ...]
        if tier is None or tier == "":
            tiers = DEFAULT_TIERS
        elif tier == "all":
            tiers = TIERS
        elif isinstance(tier, str):
            tiers = tuple(t.strip() for t in tier.split(",") if t.strip())
        else:
            try:
                tiers = tuple(tier)
            except TypeError:
                raise InvalidInput(f"tier must be text or a list of tiers, not {cut(tier)}") from None
        bad = [t for t in tiers if t not in TIERS]
        if bad or not tiers:
            raise InvalidInput(
                f"unknown tier {cut(bad[0] if bad else tier)}; use one of {', '.join(TIERS)} or all"
            )
        if kind is not None and kind not in KINDS:
            raise InvalidInput(f"unknown kind {cut(kind)}; use one of {', '.join(KINDS)}")
        if category is not None and not str(category).strip():
            category = None
        return cls(tiers, kind or None, category, agent or None, user or None)

    def excludes(self, mem: Any) -> list[str]:
        """Plain reasons these filters keep memory `mem` out of the searched set."""
        why = []
        if mem.tier not in self.tiers:
            why.append(f"its tier is {mem.tier} and the search covers {', '.join(self.tiers)}")
        for col in ("kind", "category", "agent", "user"):
            want = getattr(self, col)
            have = getattr(mem, col)
            if want is not None and have != want:
                why.append(f"its {col} is {cut(have or '(none)')}, the filter asks for {cut(want)}")
        return why
