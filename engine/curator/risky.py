"""Risky merges: near-duplicate memories that differ only in their numbers or dates ("Weekly
review week 40" / "week 44", "deploy on 2026-03-01" / "2026-04-01") are different facts that a
text embedding sees as one. Such a merge is still proposed, flagged `risky` with the reason, and a
bulk approval leaves it alone unless asked to include it."""

from __future__ import annotations

import re

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun"
# A number or date-like token: 40, 3.5, 2026-03-01, 03/01/2026, 14:30, 1st, 2nd; a month or day name.
NUMBERISH = re.compile(
    rf"\d+(?:[.,:/-]\d+)*(?:st|nd|rd|th)?|\b(?:{_MONTHS}|{_DAYS})\b",
    re.IGNORECASE,
)


def _masked(text: str) -> str:
    t = NUMBERISH.sub("#", text.lower())
    return " ".join(re.sub(r"[^\w#]+", " ", t).split())


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(m.group(0).lower() for m in NUMBERISH.finditer(text))


def numeric_risk(texts: list[str]) -> str | None:
    """Why merging `texts` is risky (they are equal once numbers and dates are masked, but those
    differ), or None."""
    if len(texts) < 2:
        return None
    if len({_masked(t) for t in texts}) != 1:
        return None
    tokens = [_tokens(t) for t in texts]
    if len(set(tokens)) == 1:
        return None  # the same numbers: a true duplicate
    shown = " / ".join(" ".join(t) or "(none)" for t in tokens)
    return f"the texts differ only in numbers or dates ({shown}): probably different facts"


def risk_of(evidence: dict) -> str | None:
    """The risky reason recorded in a proposal's evidence, if any."""
    if not isinstance(evidence, dict) or not evidence.get("risky"):
        return None
    return str(evidence.get("risky_reason") or "risky")
