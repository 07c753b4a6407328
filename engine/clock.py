"""All engine time comes from here, so decay and the curator can be replayed at any moment."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the Unix epoch (UTC)."""


class SystemClock:
    def now(self) -> float:
        return time.time()


class FixedClock:
    """A clock that only moves when told to (tests, previews, replays)."""

    def __init__(self, t: float | str) -> None:
        self.t = parse_time(t) if isinstance(t, str) else float(t)

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


DAY = 86400.0


def iso(t: float | None) -> str | None:
    """Epoch seconds -> ISO-8601 UTC with a Z, or None."""
    if t is None:
        return None
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> float:
    """ISO-8601 (date, or date and time, Z or offset; naive means UTC) -> epoch seconds."""
    s = text.strip()
    if s.endswith("Z") or s.endswith("z"):
        s = s[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(s)
    except ValueError as exc:
        from engine.errors import InvalidInput, cut

        raise InvalidInput(f"not an ISO-8601 time: {cut(text)}") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()
