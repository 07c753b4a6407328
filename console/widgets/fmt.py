"""Small text formats the panes share (a pane never imports another pane)."""

from __future__ import annotations

from datetime import UTC, datetime


def when(t: float | None) -> str:
    """An epoch time as `YYYY-MM-DD HH:MM` (UTC), or – when unknown."""
    return "–" if t is None else datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M")


def one_line(text: str, n: int) -> str:
    """`text` on one line (runs of whitespace become one space), cut to `n` characters with …."""
    s = " ".join(str(text).split())
    return s if len(s) <= n else s[: n - 1] + "…"
