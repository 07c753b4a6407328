"""Marks: the rows an operator picked with `space` in a table (Rules, the Decay crossings), so one
key and one confirmation act on all of them. Marks are row keys; a refresh keeps the ones still
shown and drops the rest. With nothing marked, an action falls back to the selected row."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

MARK = "✓"


class Marks:
    def __init__(self) -> None:
        self.keys: list[str] = []

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, key: object) -> bool:
        return key in self.keys

    def toggle(self, key: str) -> bool:
        """Mark or unmark `key`; True when it is now marked."""
        if key in self.keys:
            self.keys.remove(key)
            return False
        self.keys.append(key)
        return True

    def keep_only(self, shown: Iterable[str]) -> None:
        present = set(shown)
        self.keys = [k for k in self.keys if k in present]

    def clear(self) -> None:
        self.keys = []

    def targets(self, selected: str | None) -> list[str]:
        """The marked keys, or the selected row's when none is marked."""
        return list(self.keys) if self.keys else ([selected] if selected else [])

    def cell(self, key: str, label: object) -> Text:
        """The id cell: `✓ 12` when marked (plain text, never markup)."""
        text = label.plain if isinstance(label, Text) else str(label)
        return Text(f"{MARK} {text}", style="bold") if key in self.keys else Text(text)

    def title(self, base: str) -> str:
        return f"{base} · {len(self.keys)} marked" if self.keys else base
