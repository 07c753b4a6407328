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


# -- what a survivor drops (issue #25: a merge at cosine 0.82 lost "unless the on-call agrees") --------
NEGATIONS = frozenset({"not", "never", "no", "nor", "cannot"})
CONDITIONS = frozenset({"unless", "only", "except", "if"})
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?:;\n]\s*$")
CLAUSE_WORDS = 6  # words shown after a dropped condition ("unless the on-call agrees")


def _words(text: str) -> list[tuple[str, int]]:
    return [(m.group(0), m.start()) for m in _WORD.finditer(text)]


def _lower_set(text: str) -> set[str]:
    return {w.lower().replace("’", "'") for w, _ in _words(text)}


def _is_negation(w: str) -> bool:
    low = w.lower().replace("’", "'")
    return low in NEGATIONS or low.endswith("n't")


def names_in(text: str) -> list[str]:
    """Capitalised words that do not start a sentence (a person, a team, a product): "Lee",
    "PagerDuty", "EU". "I" is not a name."""
    out = []
    for w, at in _words(text):
        if not w[:1].isupper() or w == "I" or at == 0 or _SENTENCE_END.search(text[:at]):
            continue
        out.append(w)
    return out


def _clause(text: str, word: str) -> str:
    """`word` and the words after it up to the sentence's end, as written (hyphens kept)."""
    ms = list(_WORD.finditer(text))
    i = next(k for k, m in enumerate(ms) if m.group(0).lower() == word.lower())
    end = ms[min(i + CLAUSE_WORDS, len(ms)) - 1].end()
    stop = re.search(r"[.!?;\n]", text[ms[i].start() : end])
    return " ".join(text[ms[i].start() : ms[i].start() + stop.start() if stop else end].split())


def merge_risks(member_texts: list[str], survivor: str) -> list[str]:
    """Why keeping only `survivor` may lose meaning that a member carried: a negation, a
    condition ("unless", "only", "except", "if" and the words after it), a number or date, or a
    name present in a member but absent from the survivor; and members that differ only in
    numbers or dates. Empty: nothing is dropped."""
    kept = _lower_set(survivor)
    kept_nums = {t.lower() for t in NUMBERISH.findall(survivor)}
    found: dict[str, None] = {}
    for text in member_texts:
        prev = ""
        for w, _ in _words(text):
            low = w.lower().replace("’", "'")
            if low in kept:
                prev = low
                continue
            if _is_negation(w):
                found.setdefault(f"drops the negation “{w}”")
            elif low in CONDITIONS and prev not in CONDITIONS:  # "only if": one clause
                found.setdefault(f"drops the condition “{_clause(text, w)}”")
            prev = low
        for n in NUMBERISH.findall(text):
            if n.lower() not in kept_nums:
                found.setdefault(f"drops the number or date “{n}”")
        for name in names_in(text):
            if name.lower() not in kept:
                found.setdefault(f"drops the name “{name}”")
    out = list(found)
    if why := numeric_risk(member_texts):
        out.insert(0, why)
    return out


def flag(evidence: dict, member_texts: list[str], survivor: str) -> None:
    """Record a merge candidate's risks in its evidence (`risky`, `risky_reason`, `risks`)."""
    risks = merge_risks(member_texts, survivor)
    if risks:
        evidence["risky"], evidence["risky_reason"], evidence["risks"] = True, "; ".join(risks), risks
