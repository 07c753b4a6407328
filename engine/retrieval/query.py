"""Turning operator or agent text into safe FTS5 queries.

User text never reaches MATCH raw: it is split into word tokens, each quoted the way datasette's
escape_fts() does, and OR-ed so a natural-language question need not match every word (BM25 still
ranks memories matching more, and rarer, terms first). Stop words are dropped unless nothing else
is left. Text with CJK goes to the trigram index; CJK shorter than 3 characters to a LIKE scan.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

MAX_TERMS = 32  # a 100 kB query must not become a 100 kB MATCH
MAX_TERM_LEN = 64

STOP_WORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been before being
below between both but by can could did do does doing don't down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over own
same she should so some such than that that's the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which while who whom why
will with would you your yours yourself yourselves s t d ll m o re ve y did does ever also
""".split()  # noqa: SIM905 - a paragraph of words reads better than a column of them
)

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_CJK = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u3000-\u303f\uff00-\uffef]"
)
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")


def normalise_query(text: str) -> str:
    """The one normal form of query text on every path (search, explain, messages, both backends):
    lone surrogates and NULs replaced, then NFKC, so full-width Latin, half-width katakana and other
    compatibility forms (ordinary Japanese and Chinese input) become the characters the tokenizers
    and the CJK detection know."""
    safe = text.encode("utf-8", "replace").decode("utf-8").replace("\x00", " ")
    return unicodedata.normalize("NFKC", safe)


def clean(text: str) -> str:
    """Search text that is safe to bind, never an error (see normalise_query)."""
    return normalise_query(text)


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def terms(text: str) -> list[str]:
    """Distinct lower-cased word tokens in order, possessives folded ("who's" -> "who")."""
    seen: dict[str, None] = {}
    for m in _WORD.finditer(clean(text)):
        w = m.group(0).lower().replace("’", "'")
        w = w.split("'")[0] if w.endswith(("'s", "'re", "'ve", "'ll", "'d", "'t")) else w
        if w and len(w) <= MAX_TERM_LEN:
            seen.setdefault(w, None)
    return list(seen)


def content_terms(text: str) -> list[str]:
    ts = terms(text)
    kept = [t for t in ts if t not in STOP_WORDS]
    return (kept or ts)[:MAX_TERMS]


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


PlanIndex = Literal["words", "trigram", "like", "none"]  # an FTS index, a LIKE scan, or nothing


@dataclass(frozen=True)
class FtsPlan:
    """How one query will run: an FTS5 MATCH on `index` ('words' or 'trigram'), or LIKE patterns."""

    index: PlanIndex
    match: str | None
    like: tuple[str, ...]
    terms: tuple[str, ...]
    # Set by the keyword retriever's cost bounds on big databases (engine/keyword.py):
    dropped: tuple[tuple[str, int], ...] = ()  # (word, memories containing it) left out
    windowed: tuple[tuple[str, int], ...] = ()  # kept words scored over the newest memories only
    recent_from: int | None = None  # ... those with ids above this


def plan(text: str) -> FtsPlan:
    t = clean(text).strip()
    if not t:
        return FtsPlan("none", None, (), ())
    runs = _CJK_RUN.findall(t) if has_cjk(t) else []
    if runs:  # CJK punctuation or forms alone (no run of letters) is plain words
        words = [w for w in terms(_CJK_RUN.sub(" ", t)) if w not in STOP_WORDS]
        long_runs = [r for r in runs if len(r) >= 3]
        if long_runs:
            parts = [quote(r) for r in long_runs[:MAX_TERMS]] + [quote(w) for w in words if len(w) >= 3][
                :MAX_TERMS
            ]
            return FtsPlan("trigram", " OR ".join(parts), (), tuple(long_runs + words))
        pats = tuple(f"%{_like_escape(r)}%" for r in runs[:8])
        return FtsPlan("like", None, pats, tuple(runs))
    ts = content_terms(t)
    if not ts:
        return FtsPlan("none", None, (), ())
    return FtsPlan("words", " OR ".join(quote(x) for x in ts), (), tuple(ts))


def _like_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# -- what a question names: a time, a person (hybrid search's boosts, engine/retrieval/fusion.py) --
MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
_MONTH = re.compile(r"\b(" + "|".join(m for m in MONTHS if m != "may") + r")\b", re.IGNORECASE)
# "may" is mostly the verb: only "in May", "May 3", "3 May", "May, 2023" name the month.
_MAY = re.compile(r"\b(?:in|of|early|late|mid|since|until|during)\s+May\b|\bMay\b\s*,?\s*\d|\d\s+May\b")


def named_time(text: str) -> tuple[int | None, int | None]:
    """(month 1-12, year) that text names, either None: "in June", "October 13, 2023", "2022"."""
    year = _YEAR.search(text)
    m = _MONTH.search(text)
    month = MONTHS.index(m.group(1).lower()) + 1 if m else (5 if _MAY.search(text) else None)
    return month, int(year.group(1)) if year else None


def named_one(text: str, names: set[str]) -> str | None:
    """The one name of `names` that text mentions as a whole word (None: none, or several)."""
    found = [n for n in names if n and re.search(rf"\b{re.escape(n)}\b", text, re.IGNORECASE)]
    return found[0] if len(found) == 1 else None


# -- questions about time, without an LLM (hybrid search's time boost, issue #26) ------------------
_ASKS_WHEN = re.compile(
    r"^\W*(?:and |so |but )?when\b|\bsince when\b|\bhow long(?: ago)?\b"
    r"|\bhow many (?:days|weeks|months|years)"
    r"|\b(?:what|which) (?:year|month|date|day|week|weekend|time of year)\b|\bwhat time\b",
    re.IGNORECASE,
)
_DAY_MONTH = re.compile(
    r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + "|".join(MONTHS) + r")\b", re.IGNORECASE
)
_MONTH_DAY = re.compile(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b(?!:)", re.IGNORECASE)


def asks_when(text: str) -> bool:
    """Whether a question asks when (or how long ago) something happened: "When did ...?",
    "What year ...?", "How long ago ...?". A "when" inside a clause ("what did she say when ...")
    does not count."""
    return _ASKS_WHEN.search(text) is not None


def named_day(text: str) -> int | None:
    """The day of the month text names beside a month ("on October 13, 2023", "1 February"), else None."""
    m = _MONTH_DAY.search(text)
    if m:
        day = int(m.group(2))
    else:
        m2 = _DAY_MONTH.search(text)
        if m2 is None:
            return None
        day = int(m2.group(1))
    return day if 1 <= day <= 31 else None
