"""Small text formats the panes share (a pane never imports another pane)."""

from __future__ import annotations

from datetime import UTC, datetime


def when(t: float | None) -> str:
    """An epoch time as `YYYY-MM-DD HH:MM` (UTC), or – when unknown."""
    return "–" if t is None else datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M")


CELL_MAX = 2000  # a flexible column's cell holds the whole line; the table cuts it to the width


def one_line(text: str, n: int) -> str:
    """`text` on one line (runs of whitespace become one space), cut to `n` characters with …."""
    s = " ".join(str(text).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def centred(text: str, query: str, width: int) -> str:
    """`text` on one line, cut to `width` characters around the first match of `query` (the
    whole query, else its first word found), so the match sits in the middle, with … where cut."""
    s = " ".join(str(text).split())
    if len(s) <= width:
        return s
    low = s.lower()
    terms = [query.strip(), *query.split()]
    pos, size = next(((low.find(t.lower()), len(t)) for t in terms if t and t.lower() in low), (0, 0))
    start = max(0, min(pos + size // 2 - width // 2, len(s) - width))
    out = s[start : start + width]
    if start > 0:
        out = "…" + out[1:]
    if start + width < len(s):
        out = out[:-1] + "…"
    return out
