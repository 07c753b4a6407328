"""Stored text in widgets, made safe at one place: control characters (ESC, BEL, C1, DEL) and
bidi overrides are shown spelled out (`\\x1b`), never sent to the terminal or used to reorder
what an operator reads; text is never parsed as markup (`[bold]` is shown as written).

Panes use `SafeStatic` instead of Static; DataGrid cells and the header, dialogs and notices go
through `safe_renderable`. The escaping itself is console.shared.text_safety.visible (shared with the CLI).
"""

from __future__ import annotations

from typing import Any

from rich.text import Span, Text
from textual.widgets import Static

from console.shared.text_safety import has_unsafe, visible


def safe_text(t: Text, *, one_line: bool = False) -> Text:
    """`t` with unsafe characters spelled out and its styles kept on the same characters."""
    plain = t.plain
    if not has_unsafe(plain) and not (one_line and ("\n" in plain or "\t" in plain)):
        return t
    at, parts, pos = [], [], 0
    for ch in plain:
        at.append(pos)
        rep = visible(ch, one_line=one_line)
        parts.append(rep)
        pos += len(rep)
    at.append(pos)
    out = Text(
        "".join(parts),
        style=t.style,
        justify=t.justify,
        overflow=t.overflow,
        no_wrap=t.no_wrap,
        end=t.end,
        tab_size=t.tab_size,
    )
    n = len(plain)
    out.spans = [Span(at[min(s.start, n)], at[min(s.end, n)], s.style) for s in t.spans]
    return out


def safe_renderable(content: Any, *, one_line: bool = False) -> Any:
    """str -> escaped str (callers show it without markup); Text -> escaped Text; else as is."""
    if isinstance(content, str):
        return visible(content, one_line=one_line)
    if isinstance(content, Text):
        return safe_text(content, one_line=one_line)
    return content


class SafeStatic(Static):
    """A Static for data: escaped control characters, and no markup unless asked for."""

    def __init__(self, content: Any = "", *, markup: bool = False, **kwargs: Any) -> None:
        super().__init__(safe_renderable(content), markup=markup, **kwargs)

    def update(self, content: Any = "", *, layout: bool = True) -> None:
        super().update(safe_renderable(content), layout=layout)
