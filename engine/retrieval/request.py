"""A search request: what search and explain are asked, built (and checked) once at the façade."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.errors import InvalidInput, cut
from engine.retrieval.filters import Filters
from engine.types import SEARCH_MODES

MAX_K = 1000


@dataclass(frozen=True)
class SearchRequest:
    query: str
    k: int = 10
    filters: Filters = field(default_factory=Filters)
    mode: str | None = None  # None: hybrid when the embedder is ready, keyword-only until then
    record_access: bool = True  # an agent's recall reinforces what it returns; an operator's does not
    door: str = ""  # an agent's door (mcp, hermes, cli): the recall is logged (engine/recalls/log.py)
    for_agent: str = ""  # the agent the door recalls for, as logged

    @classmethod
    def make(
        cls,
        query: str,
        k: Any = 10,
        tier: Any = None,
        kind: str | None = None,
        category: str | None = None,
        agent: str | None = None,
        user: str | None = None,
        mode: str | None = None,
        record_access: bool = True,
        door: str = "",
        for_agent: str = "",
    ) -> SearchRequest:
        """From what a caller passes (the façade's keyword arguments). Odd query text is not an
        error (search says why it found nothing); a query that is not text, an unknown mode, a k
        outside 1..MAX_K and bad filters are the caller's error (InvalidInput)."""
        if not isinstance(query, str):
            raise InvalidInput("the query must be text")
        if mode is not None and mode not in SEARCH_MODES:
            raise InvalidInput(f"unknown mode {cut(mode)}; use one of {', '.join(SEARCH_MODES)}")
        try:
            k = int(k)
        except (TypeError, ValueError, OverflowError):  # int(inf) overflows
            raise InvalidInput(f"k must be a whole number, not {cut(k)}") from None
        if not 1 <= k <= MAX_K:
            raise InvalidInput(f"k must be between 1 and {MAX_K}")
        filters = Filters.make(tier, kind, category, agent, user)
        return cls(query, k, filters, mode, bool(record_access), str(door or ""), str(for_agent or ""))
