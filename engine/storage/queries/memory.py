"""Read model: what the search, the memory lists, the session views and the façade read across
memories, sessions and messages (and the overview's counts of other tables). No SQL here: each
adapter renders these reads in its own dialect (engine/storage/{sqlite,postgres}/queries/)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from engine.storage.gateways.base import Gateway
from engine.storage.indexes import MemoryFilter

# The columns state weighting reads for each candidate that can still reach the top k.
# How much of a memory's text hybrid search's boosts read (a leading "Name:", time expressions).
HEAD_CHARS = 1000
WEIGHT_COLUMNS = (
    "id", "kind", "tier", "pinned", "anchor_strength", "last_reinforced_at", "importance",
    "created_at", "last_accessed_at",
)  # fmt: skip

# The vector matrix's filter fields, in its order.
MATRIX_FIELDS = ("tier", "kind", "category", "agent", "user")


class MemoryQueries(Gateway):
    """Read-only views; the caller's connection (its snapshot)."""

    # -- memories ------------------------------------------------------------------------------------
    def same_text(self, content: str, agent: str) -> int | None:
        """The id of a memory of `agent` holding exactly `content`, outside the archive (None)."""
        raise NotImplementedError

    def from_message(self, message_id: int) -> list[Any]:
        """Whole rows of the memories made from one message, by id."""
        raise NotImplementedError

    def listed(
        self,
        *,
        tier: str | None = None,
        agent: str | None = None,
        session_id: str | None = None,
        limit: int = 500,
    ) -> list[Any]:
        """Whole rows, newest id first, of the memories matching the values given."""
        raise NotImplementedError

    def pending_count(self) -> int:
        """How many memories wait for their vector (embedded = 0)."""
        raise NotImplementedError

    def pending(self, limit: int) -> list[Any]:
        """Whole rows of the first `limit` memories (by id) that wait for their vector."""
        raise NotImplementedError

    def content_of(self, memory_id: int) -> str | None:
        """The memory's current text (None: no such memory)."""
        raise NotImplementedError

    def counts(self) -> tuple[dict[str, int], int, int, int, int]:
        """The overview: (memories per tier, rules not retired, pending proposals, open forget
        requests, sessions)."""
        raise NotImplementedError

    # -- sessions and messages -------------------------------------------------------------------------
    def sessions(
        self,
        *,
        agent: str | None = None,
        user: str | None = None,
        source: str | None = None,
        since: float | None = None,
        until: float | None = None,
        text: str | None = None,
        limit: int = 500,
    ) -> list[Any]:
        """Session rows with their message count as `n`, newest start first. `text`: a substring
        of the title, id, agent or user (ASCII case-insensitive; % and _ match as wildcards)."""
        raise NotImplementedError

    def session(self, session_id: str) -> Any:
        """The session's row with its message count as `n` (None: no such session)."""
        raise NotImplementedError

    def messages_of(self, session_id: str) -> list[Any]:
        """The session's messages in time order (then id)."""
        raise NotImplementedError

    def children(self, session_id: str) -> list[Any]:
        """The sessions naming this one as parent, by start."""
        raise NotImplementedError

    def messages_like(
        self, patterns: Sequence[str], *, session_id: str | None, agent: str | None, limit: int
    ) -> list[Any]:
        """Messages (with their session's title as `session_title`) whose text matches one of the
        LIKE `patterns` (backslash escapes; ASCII case-insensitive), newest first."""
        raise NotImplementedError

    # -- search -------------------------------------------------------------------------------------------
    def weighting(self, ids: Sequence[int], *, metadata: bool = False) -> list[Any]:
        """WEIGHT_COLUMNS (and `metadata`) of these memories (the ones that exist)."""
        raise NotImplementedError

    def rows(self, ids: Sequence[int]) -> list[Any]:
        """Whole rows of these memories (the ones that exist)."""
        raise NotImplementedError

    def boost_fields(self, memory_id: int) -> Any:
        """(metadata, created_at) of one memory (None: no such memory)."""
        raise NotImplementedError

    def session_neighbours(self, ids: Sequence[int], filters: MemoryFilter) -> list[tuple[int, Any, Any]]:
        """(id, the previous id, the next id) in the same session among memories passing
        `filters`, for each of `ids` that has a session (None where there is no neighbour)."""
        raise NotImplementedError

    def like_ranked(self, patterns: Sequence[str], filters: MemoryFilter, n: int) -> list[int]:
        """Ids (newest first, at most n) of the memories passing `filters` whose text matches
        one of the LIKE `patterns` (backslash escapes; ASCII case-insensitive)."""
        raise NotImplementedError

    def id_range(self) -> tuple[int, int]:
        """(highest, lowest) memory id; 0 for an empty table."""
        raise NotImplementedError

    def tier_counts(self) -> dict[str, int]:
        """How many memories each tier holds."""
        raise NotImplementedError

    # -- the in-memory matrices' loading -------------------------------------------------------------
    def all_ids(self) -> Iterator[int]:
        """Every memory id, ascending."""
        raise NotImplementedError

    def text_length(self, ids: Sequence[int]) -> int:
        """The total length in characters of these memories' text."""
        raise NotImplementedError

    def texts(self, ids: Sequence[int]) -> Iterator[tuple[int, str]]:
        """(id, text) of these memories (the ones that exist)."""
        raise NotImplementedError

    def embedded_fields(self) -> list[Any]:
        """(id, *MATRIX_FIELDS) of every memory marked embedded."""
        raise NotImplementedError

    def embedded_fields_joined(self, sep: str) -> list[Any]:
        """(id, MATRIX_FIELDS joined by `sep` in one string) of every embedded memory, by id."""
        raise NotImplementedError
