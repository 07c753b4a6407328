"""Marks: the rows an operator picked with `space` in a table (Rules, the Decay crossings), so one
key and one confirmation act on all of them. Marks are row keys; a refresh keeps the ones still
shown and drops the rest. With nothing marked, an action falls back to the selected row."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text

from engine.memory_bulk import MemoryOutcome

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


def outcomes_text(outcomes: Sequence[MemoryOutcome], done: str) -> str:
    """One line for a bulk edit's per-id outcomes: `3 memories archived · 1 already archived ·
    not found: #99` (a stale mark is said, not silently dropped)."""
    changed = sum(o.outcome == "done" for o in outcomes)
    parts = [f"{changed} {'memory' if changed == 1 else 'memories'} {done}"]
    if same := [o for o in outcomes if o.outcome == "unchanged"]:
        parts.append(f"{len(same)} {same[0].note}")
    if missing := [o.id for o in outcomes if o.outcome == "missing"]:
        parts.append("not found: " + ", ".join(f"#{i}" for i in missing))
    if refused := [o for o in outcomes if o.outcome == "refused"]:
        parts.append(
            f"refused: {refused[0].note}" + (f" (+{len(refused) - 1} more)" if len(refused) > 1 else "")
        )
    return " · ".join(parts) + "."
