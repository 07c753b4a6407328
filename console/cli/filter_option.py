"""`--filter "agent:atlas since:2026-01 words…"` on the listing verbs (issue #27): the console's
filter language (engine/filter_language), so a filter typed in a pane works unchanged in a script.
The verb's own options still work; a key given both ways must agree (else one line, exit 2)."""

from __future__ import annotations

from typing import Any

import click

from engine.filter_language import Filter, FilterError, parse_filter

filter_option = click.option(
    "--filter",
    "filter_text",
    default=None,
    metavar="FILTER",
    help='The console\'s filter language, e.g. "agent:atlas since:2026-01 deploy" (keys per verb).',
)


def parsed(text: str | None, surface: str, now: float | None) -> Filter:
    return parse_filter(text or "", surface, now=now)


def merged(flags: dict[str, Any], f: Filter) -> dict[str, Any]:
    """The verb's options with the filter's keys over them; the same key two ways must agree."""
    out = dict(flags)
    for key, value in f.kwargs().items():
        given = out.get(key)
        if given not in (None, (), []) and _norm(given) != _norm(value):
            raise FilterError(f"{key}: --{key} says {given!r} but --filter says {value!r}; give it once")
        out[key] = value
    return out


def _norm(v: Any) -> Any:
    return sorted(v) if isinstance(v, list | tuple) else v
