"""Stored or typed text never reaches a terminal as control sequences.

`visible(s)` turns every control character (C0 but newline/tab, DEL, C1 0x80-0x9f) and every
bidirectional override/isolate (U+202A-202E, U+2066-2069, ...) into its escape spelled out in
printable characters (ESC -> the 4 characters `\\x1b`, U+202E -> `\\u202e`), so a memory holding
`\\x1b]0;pwned\\x07` is shown, not executed. One function for the CLI (cli_common) and the console
(widgets, panes); pure str -> str, no UI import, so anything may use it.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029"
# \n and \t are layout, not commands; \r is escaped (it rewrites the line a reader sees).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + "]")
_UNSAFE_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f" + _BIDI + "]")


def _spell(m: re.Match) -> str:
    # C0 as \xNN (what an operator recognises: \x1b); DEL, C1 and bidi as \uNNNN, which is also
    # a valid JSON escape of the same character: JSON some code writes with ensure_ascii=False
    # (C0 is always escaped by json.dumps) stays valid, meaning unchanged, through SafeStream.
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x20 else f"\\u{c:04x}"


def visible(text: object, *, one_line: bool = False) -> str:
    """`text` with control and bidi characters spelled out; `one_line` also escapes \\n and \\t."""
    s = "" if text is None else str(text)
    return (_UNSAFE_ONE_LINE if one_line else _UNSAFE).sub(_spell, s)


def has_unsafe(text: str) -> bool:
    return _UNSAFE.search(text) is not None


def json_safe(doc: str) -> str:
    """A JSON document with DEL, C1 and bidi characters as \\uXXXX escapes (json.dumps with
    ensure_ascii=False escapes only C0). Those characters can only sit inside JSON strings, where
    \\uXXXX means the same character, so the document parses to the same value."""
    return re.sub("[\x7f-\x9f" + _BIDI + "]", lambda m: f"\\u{ord(m.group()):04x}", doc)


class SafeStream:
    """A text stream proxy that makes every write visible(): installed around stdout/stderr for
    the CLI verbs, so every verb's output (emit, table, plain click.echo) is safe at one door."""

    def __init__(self, raw) -> None:
        self._raw = raw

    def write(self, s):
        return self._raw.write(visible(s) if isinstance(s, str) else s)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._raw, name)
