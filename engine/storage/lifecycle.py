"""The part of the storage port the decay pass needs: which index carries its reads and updates
of the memories table.

The pass's SQL (which rows, which columns) is portable and stays in the service; how the database
reaches the rows is not. SQLite's planner, without ANALYZE statistics, prefers the tier index and
walks every active row, so its adapter names the partial `archive_at` index (which holds only
decaying rows) or asks for a plain scan; PostgreSQL's planner chooses well on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal, Protocol

# archive_at: through the partial index of decaying rows (a pass touches only what crosses);
# scan: every row, no index (a full rewrite is cheaper without index lookups);
# planner: whatever the database chooses (e.g. while the archive_at index is being rebuilt).
DecayPath = Literal["archive_at", "scan", "planner"]
Params = Mapping[str, Any] | Sequence[Any]


class DecayAccess(Protocol):
    """Reads and updates of `memories` along a chosen path; `where` and `assignments` are portable
    SQL fragments over memory columns with their parameters (never user text)."""

    def count(self, conn: Any, path: DecayPath, where: str, params: Params) -> int:
        """How many memories pass `where`."""
        ...

    def update(self, conn: Any, path: DecayPath, assignments: str, where: str, params: Params) -> int:
        """`SET assignments` on the memories passing `where`; how many changed."""
        ...

    def update_ids(
        self, conn: Any, path: DecayPath, assignments: str, where: str, params: Params
    ) -> list[int]:
        """Like `update`, returning the ids it changed (unordered). What the store derives from
        the changed rows (its vector index's filter fields, the change log) follows in the same
        transaction — row by row or, for a burst of many rows, in bulk: the adapter's choice."""
        ...

    def archive_index_dropped(self, conn: Any) -> AbstractContextManager[bool]:
        """Inside the caller's transaction: the archive_at index dropped for the block and rebuilt
        after it (True), or left alone where that does not pay or it is missing (False). Updating
        a big index row by row in random key order costs far more than sorting it once."""
        ...
