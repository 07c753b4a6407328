"""What a memory shows about who said it and when, without benchmark-only metadata (issue #26).

A chat log ingested as it is ("Caroline: I went to the support group yesterday", created_at = the
message time) carries its speaker in a leading "Name:" and its date in `created_at`; hybrid search's
boosts (engine/retrieval/fusion.py) read these when `metadata.speaker` / `metadata.date` are absent.
A memory *carries a time expression* when its text says when something happened ("yesterday",
"last week", "two years ago", "in June", "2022"); a question asking *when* favours those.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from engine.storage.queries.memory import HEAD_CHARS

# A leading "Name:" — one to three capitalised words, then ": " and text. Labels that are not
# speakers ("Note: ...", "TODO: ...") are left out; a message role ("User:", "Assistant:") is one.
_SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30}){0,2})\s*:\s+\S")
NOT_SPEAKERS = frozenset(
    """note notes todo update summary warning error fact facts tip important rule reminder re fyi
    edit ps nb question answer q a step result status context example source""".split()  # noqa: SIM905
)


def speaker_in(content: str | None) -> str | None:
    """The speaker a leading "Name:" names ("Caroline: hi" -> "Caroline"), None without one."""
    if not content:
        return None
    m = _SPEAKER.match(content[:HEAD_CHARS])
    if m is None:
        return None
    name = m.group(1).strip()
    return None if name.lower() in NOT_SPEAKERS else name


def day_of(created_at: float | None) -> tuple[int, int, int] | None:
    """(year, month, day) a memory was written (UTC), None when unknown."""
    if not created_at:
        return None
    t = datetime.fromtimestamp(float(created_at), UTC)
    return t.year, t.month, t.day


_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = "january|february|march|april|june|july|august|september|october|november|december"
_UNIT_WORDS = r"days?|weeks?|weekends?|months?|years?|nights?|summers?|winters?|springs?|falls?"
_UNITS = f"(?:{_UNIT_WORDS})"
_NUM = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple(?: of)?|several)"
# Words that place an event in time. "may" is the verb too often to count alone.
_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|recently|lately|ago|earlier this|the other day"
    rf"|(?:last|next|this|past|coming|previous) (?:{_WEEKDAYS}|{_UNIT_WORDS}|morning|evening|time)"
    rf"|{_NUM} {_UNITS} (?:ago|back|later|before|earlier)"
    rf"|(?:{_WEEKDAYS})|(?:in|since|until|during|early|late|mid|last|next|this) (?:{_MONTHS}|may)"
    rf"|(?:{_MONTHS})|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)


def has_time(content: str | None) -> bool:
    """Whether the text says when something happened (a relative or named time)."""
    return content is not None and _TIME.search(content[:HEAD_CHARS]) is not None
