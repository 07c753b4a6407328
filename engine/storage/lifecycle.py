"""The part of the storage port the decay pass needs: typed reads and updates of decaying
memories, each adapter rendering its own SQL, along an access path it chooses the index for.

What a pass reads and changes crosses the port as data (a `DecayFilter`, a `DecayChange`), never
as SQL text; the formulas (engine/lifecycle/decay.py) are rendered by each adapter. How the
database reaches the rows is the adapter's business too: SQLite's planner, without ANALYZE
statistics, prefers the tier index and walks every active row, so its adapter names the partial
`archive_at` index (which holds only decaying rows) or asks for a plain scan; PostgreSQL's planner
chooses well on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from engine.storage.port import Connection

# archive_at: through the partial index of decaying rows (a pass touches only what crosses);
# scan: every row, no index (a full rewrite is cheaper without index lookups);
# planner: whatever the database chooses (e.g. while the archive_at index is being rebuilt).
DecayPath = Literal["archive_at", "scan", "planner"]

# What a decay step sets on the memories it selects:
# schedule: archive_at = the moment strength reaches the threshold;
# archive: tier 'archived', the stored strength set to the current one, updated_at = now;
# snapshot: the stored strength set to the current one.
DecayChange = Literal["schedule", "archive", "snapshot"]


@dataclass(frozen=True)
class DecayClock:
    """The decay formulas' inputs: `now`, the archive threshold, λ per kind (per second; a kind
    not listed decays at the semantic rate)."""

    now: float
    threshold: float
    rates: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class DecayFilter:
    """Decaying memories (tier active, not pinned), narrowed by when they cross the threshold.

    archive_at: "unscheduled" (none yet), "due" (at or before now), "later" (after now), None (any).
    estimated: with archive_at "due"/"later", a row with no archive_at yet counts by its computed
    crossing (what scheduling would give it) instead of not at all.
    stale_by: only rows whose stored strength exceeds the current one by at least this much."""

    clock: DecayClock
    archive_at: Literal["unscheduled", "due", "later"] | None = None
    estimated: bool = False
    stale_by: float | None = None


class DecayAccess(Protocol):
    """Reads and updates of `memories` along a chosen path, by typed filter and change."""

    def count(self, conn: Connection, path: DecayPath, where: DecayFilter) -> int:
        """How many memories pass `where`."""
        ...

    def ids(self, conn: Connection, path: DecayPath, where: DecayFilter) -> list[int]:
        """The ids of the memories passing `where`, ascending."""
        ...

    def update(self, conn: Connection, path: DecayPath, change: DecayChange, where: DecayFilter) -> int:
        """Apply `change` to the memories passing `where`; how many changed."""
        ...

    def update_ids(
        self, conn: Connection, path: DecayPath, change: DecayChange, where: DecayFilter
    ) -> list[int]:
        """Like `update`, returning the ids it changed (unordered). What the store derives from
        the changed rows (its vector index's filter fields, the change log) follows in the same
        transaction — row by row or, for a burst of many rows, in bulk: the adapter's choice."""
        ...

    def archive_index_dropped(self, conn: Connection) -> AbstractContextManager[bool]:
        """Inside the caller's transaction: the archive_at index dropped for the block and rebuilt
        after it (True), or left alone where that does not pay or it is missing (False). Updating
        a big index row by row in random key order costs far more than sorting it once."""
        ...
