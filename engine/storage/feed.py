"""What the change feed's followers (the in-memory matrices) share with it: a follower says where
it is in the log and what it reads; a catch-up is what one read of the log brought for all of them
(issue #24: on PostgreSQL a recall's matrices caught up in one statement instead of ~7)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

VECTORS: Final = "vectors"
TEXTS: Final = "texts"


class Follower(Protocol):
    """A matrix following the log: `seq` is the last entry it applied (-1: not loaded yet)."""

    seq: int
    reads: Literal["vectors", "texts"]  # the changed memories' vectors, or their contents


@dataclass(frozen=True)
class CatchUp:
    """The log's entries after `after` (every one up to the snapshot's head, in seq order) and,
    when asked for, what the changed memories hold now: `vectors` (memory id -> the vector store's
    entry row) and `texts` (text-changed memory id -> content). A memory in `changed` but not in
    `vectors`/`texts` no longer has one (deleted). `texts` is None when not read, or when their
    `text_chars` were past the bound the reader gave (the follower decides what to do then)."""

    after: int
    seqs: list[int] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    text_flags: list[bool] = field(default_factory=list)
    vectors: dict[int, tuple[Any, ...]] | None = None
    texts: dict[int, str] | None = None
    text_chars: int = 0

    def covers(self, after: int) -> bool:
        """True when a follower at `after` finds everything it needs here."""
        return self.after <= after

    def changed(self, after: int, text: bool = False) -> list[int]:
        """The memory ids logged after `after` (`text`: only entries whose words changed),
        ascending, each once: the feed's `changed()` answered from what was read."""
        out = {
            mid
            for s, mid, t in zip(self.seqs, self.ids, self.text_flags, strict=True)
            if s > after and (t or not text)
        }
        return sorted(out)
