"""The one filter language (issue #27): `agent:atlas tier:archived since:2026-01 deploy notes`.

A token `key:value` filters; any other token is a word the listing searches for. A value or a word
with spaces is quoted (`agent:"night shift"`, `"two words"`; `\\"` inside quotes); a quoted token is
always a word, so `"http://x"` searches for that text instead of failing as an unknown key. Each
surface (sessions, search, rules, curator, audit) accepts its own keys (surfaces.py) and checks
closed value sets. Whatever goes wrong is one `FilterError` line naming the token and its column.

Times: an ISO date or time, a year (`2026`), a month (`2026-01`) or an age (`7d`, `24h`, `2w` ago);
`until:` a year or a month runs to the end of it."""

from __future__ import annotations

import difflib
import re
import unicodedata
from calendar import monthrange
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from engine.clock import parse_time
from engine.errors import InvalidInput, cut

from .surfaces import ALL_KEYS, SURFACES, TIME_KEYS, Surface

MAX_CHARS = 2000  # longer is not a filter anyone typed: refused in one line, never scanned further
_KEY = re.compile(r"[A-Za-z][A-Za-z_]*")
_AGE = re.compile(r"(\d{1,6})([hdw])")
_AGE_SECONDS = {"h": 3600, "d": 86400, "w": 7 * 86400}
_BIDI = {0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069}


class FilterError(InvalidInput):
    """A filter that cannot be applied: the message is one line and names the token at fault."""

    def __init__(self, message: str, column: int | None = None) -> None:
        where = f" (column {column})" if column is not None else ""
        super().__init__(f"filter: {message}{where}")
        self.column = column


@dataclass(frozen=True)
class Token:
    key: str | None  # lower case; None for a word
    value: str
    column: int  # 1-based, where the token starts
    closed: bool = True  # False: an unclosed quote (only accepted while typing)


@dataclass(frozen=True)
class Filter:
    """A parsed filter. Only the fields its surface accepts can be set; `kwargs()` is what the
    surface's engine call takes, `query` the free words."""

    surface: str
    words: tuple[str, ...] = ()
    agent: str | None = None
    user: str | None = None
    source: str | None = None
    tier: str | None = None
    kind: str | None = None
    category: str | None = None
    status: str | None = None
    domain: str | None = None
    pinned: bool | None = None
    actor: str | None = None
    action: str | None = None
    target: str | None = None
    since: float | None = None
    until: float | None = None
    keys: tuple[str, ...] = field(default=(), compare=False)  # the keys given, in order
    notes: tuple[str, ...] = field(default=(), compare=False)  # what was read otherwise than typed

    @property
    def query(self) -> str:
        return " ".join(self.words)

    def kwargs(self) -> dict[str, Any]:
        """The set filters as the surface's listing call names them (words: `text`, or `query` for
        rules; search takes its words as the query itself)."""
        out: dict[str, Any] = {k: getattr(self, k) for k in self.keys}
        if self.surface == "rules" and self.status and "," in self.status:
            out["status"] = [s for s in self.status.split(",") if s]
        if self.words and self.surface != "search":
            out["query" if self.surface == "rules" else "text"] = self.query
        return out


def parse_filter(text: str, surface: str, *, now: float | None = None, partial: bool = False) -> Filter:
    """Parse `text` for `surface`. `partial`: the operator is still typing, so a last token that
    does not parse yet (`since:2026-0`, `agent:`, an open quote) is left out instead of raising;
    every other error still raises."""
    spec = SURFACES.get(surface)
    if spec is None:
        raise InvalidInput(f"unknown filter surface {cut(surface)} (one of: {', '.join(SURFACES)})")
    if len(text) > MAX_CHARS:
        raise FilterError(f"at most {MAX_CHARS:,} characters, this one has {len(text):,}")
    _refuse_controls(text)
    toks = tokenize(text, partial=partial)
    typing_last = partial and bool(text) and not text[-1].isspace()
    values: dict[str, Any] = {}
    words: list[str] = []
    notes: list[str] = []
    for i, tok in enumerate(toks):
        try:
            if tok.key is None:
                if tok.value:
                    words.append(tok.value)
                continue
            if spec.loose and tok.key not in ALL_KEYS and not _near(tok.key, spec):
                words.append(f"{tok.key}:{tok.value}")
                notes.append(f"{tok.key}: is not a filter key here, searched as a word")
                continue
            key, value = _check(spec, tok, now)
            if key in values:
                raise FilterError(f"{key}: given twice; one value per key", tok.column)
            values[key] = value
        except FilterError:
            if typing_last and i == len(toks) - 1:
                continue
            raise
    return Filter(surface=surface, words=tuple(words), keys=tuple(values), notes=tuple(notes), **values)


def tokenize(text: str, *, partial: bool = False) -> list[Token]:
    """Split on spaces outside quotes; `key:` is recognised only before any quote."""
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        start = i
        chars: list[str] = []
        key: str | None = None
        quoted = False
        closed = True
        while i < n and not text[i].isspace():
            c = text[i]
            if c == '"':
                quoted = True
                i += 1
                while i < n and text[i] != '"':
                    if text[i] == "\\" and i + 1 < n:
                        i += 1
                    chars.append(text[i])
                    i += 1
                if i >= n:
                    if not partial:
                        raise FilterError("a quote is not closed", start + 1)
                    closed = False
                i += 1
                continue
            if c == ":" and key is None and not quoted and _KEY.fullmatch("".join(chars)):
                key = "".join(chars).lower()
                chars = []
            else:
                chars.append(c)
            i += 1
        out.append(Token(key, "".join(chars), start + 1, closed))
    return out


def _refuse_controls(text: str) -> None:
    for i, ch in enumerate(text):
        if ch in "\t\n\r":
            continue
        if unicodedata.category(ch) == "Cc" or ord(ch) in _BIDI:
            raise FilterError(f"control character U+{ord(ch):04X} is not allowed", i + 1)


def _check(spec: Surface, tok: Token, now: float | None) -> tuple[str, Any]:
    key, value = str(tok.key), tok.value
    if key in ALL_KEYS and key not in spec.keys:
        raise FilterError(
            f"{key}: does not apply to {spec.what}; keys here: {', '.join(spec.keys)}", tok.column
        )
    if key not in spec.keys:
        near = _near(key, spec)
        hint = f"did you mean {near[0]}:? " if near else ""
        raise FilterError(
            f"unknown key {cut(key, 40)} for {spec.what}; {hint}keys here: {', '.join(spec.keys)} "
            f'(quote a word that holds a colon: "{cut(key, 40)[1:-1]}:…")',
            tok.column,
        )
    if not value:
        example = (spec.values.get(key) or (("2026-01",) if key in TIME_KEYS else ("NAME",)))[0]
        raise FilterError(f"{key}: needs a value, e.g. {key}:{example}", tok.column)
    if not tok.closed:
        raise FilterError(f"{key}: the quote is not closed", tok.column)
    if key in TIME_KEYS:
        return key, parse_when(value, key, now, tok.column)
    allowed = spec.values.get(key)
    if allowed is not None:
        parts = value.split(",") if key in spec.multi else [value]
        for p in parts:
            if p.lower() not in allowed:
                raise FilterError(
                    f"{key}:{cut(p, 40)[1:-1]} is not one of {', '.join(allowed)}",
                    tok.column,
                )
        value = ",".join(p.lower() for p in parts)
    if key == "pinned":
        return key, value == "yes"
    return key, value


def _near(key: str, spec: Surface) -> list[str]:
    return difflib.get_close_matches(key, spec.keys, n=1, cutoff=0.7)


def parse_when(value: str, key: str, now: float | None, column: int | None = None) -> float:
    """A filter's time: ISO, a year, a month, or an age (`7d` ago, from the engine's clock)."""
    v = value.strip()
    if m := _AGE.fullmatch(v):
        if now is None:
            raise FilterError(f"{key}:{v} (an age) needs the engine's clock", column)
        return now - int(m.group(1)) * _AGE_SECONDS[m.group(2)]
    end = key == "until"
    try:
        if re.fullmatch(r"\d{4}", v):
            y = int(v)
            return datetime(y + 1 if end else y, 1, 1, tzinfo=UTC).timestamp()
        if m := re.fullmatch(r"(\d{4})-(\d{2})", v):
            y, mo = int(m.group(1)), int(m.group(2))
            if end:
                return datetime(y, mo, monthrange(y, mo)[1], 23, 59, 59, tzinfo=UTC).timestamp() + 1
            return datetime(y, mo, 1, tzinfo=UTC).timestamp()
        return parse_time(v)
    except (InvalidInput, ValueError):
        raise FilterError(
            f"{key}:{cut(v, 40)[1:-1]} is not a time; use 2026-01-31, 2026-01, 2026, "
            "2026-01-31T09:00Z or an age (7d, 24h, 2w)",
            column,
        ) from None


FIELDS = tuple(f.name for f in fields(Filter))
