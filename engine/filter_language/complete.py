"""Completion for the filter language: the keys a surface takes and the values a key may take
(its closed set, plus known values the caller passes: agents, domains, ...). Pure functions, so the
console's input and any other face complete the same way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .surfaces import SURFACES

_SPECIAL = set(' "\\')


def _quoted(value: str) -> str:
    if not value or any(c in _SPECIAL or c.isspace() for c in value):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


def candidates(text: str, surface: str, known: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """What the last token being typed may become, whole (`ag` -> ["agent:"], `tier:a` ->
    ["tier:active", "tier:archived", "tier:all"]); [] after a space or inside a quoted word."""
    spec = SURFACES[surface]
    if not text or text[-1].isspace():
        return []
    tok = text[text.rfind(" ") + 1 :]
    if tok.startswith('"'):
        return []
    key, sep, val = tok.partition(":")
    if not sep:
        return [f"{k}:" for k in spec.keys if k.startswith(key.lower()) and key]
    key = key.lower()
    if key not in spec.keys or '"' in val:
        return []
    head, _, last = val.rpartition(",") if key in spec.multi else ("", "", val)
    pool = list(spec.values.get(key, ()))
    pool += [v for v in (known or {}).get(key, ()) if v and v not in pool]
    lead = f"{key}:{head + ',' if head else ''}"
    return [lead + _quoted(v) for v in pool if v.lower().startswith(last.lower()) and v != last]


def complete(text: str, surface: str, known: Mapping[str, Sequence[str]] | None = None) -> str | None:
    """`text` with its last token completed to the first candidate, or None when there is none."""
    found = candidates(text, surface, known)
    if not found:
        return None
    return text[: text.rfind(" ") + 1] + found[0]
