"""The two indexes whose SQL differs by backend: the keyword index (FTS5 BM25 on SQLite, a
`tsvector` BM25 on PostgreSQL) and the vector store (vec0 / pgvector).

Services keep the retrieval policy (plans, bounds, fusion) and pass only what varies: an index
name, a quoted MATCH expression, the search's filters as typed values (`MemoryFilter`), which each
adapter renders in its own dialect inside its query. Every method runs on the connection the
caller's read or write gives it. Scores are BM25 as FTS5 reports it (lower is better) and cosine
distances (similarity = 1 - distance).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

if TYPE_CHECKING:
    from engine.storage.port import Connection

FtsIndex = Literal["words", "trigram"]  # porter-stemmed words, or trigrams (CJK)


@dataclass(frozen=True)
class MessageScope:
    """Which transcripts a message search looks in: one session, one agent's sessions, or all."""

    session_id: str | None = None
    agent: str | None = None


FtsTable = Literal["rules", "flows"]  # the lifecycle's word indexes


@dataclass(frozen=True)
class Postings:
    """The whole words index of memories at once, for the in-memory keyword matrix: lexeme i occurs
    in memories docs[starts[i]:starts[i + 1]] (ascending ids), tfs[j] times in docs[j]."""

    lexemes: list[str]
    starts: np.ndarray  # int64, len(lexemes) + 1
    docs: np.ndarray  # int64
    tfs: np.ndarray  # int32


def run_lengths(lexemes: list[str], counts: np.ndarray, occurrences: np.ndarray) -> Postings:
    """Postings from one document id per occurrence, grouped by lexeme (`counts[i]` occurrences
    of lexeme i, ascending within each): equal neighbours fold into (doc, tf)."""
    ends = np.cumsum(counts)
    term = np.repeat(np.arange(len(counts)), counts)
    if (occurrences[1:] < occurrences[:-1])[term[1:] == term[:-1]].any():  # not in doc order
        occurrences = occurrences[np.lexsort((occurrences, term))]
    new = np.ones(len(occurrences), dtype=bool)
    new[1:] = occurrences[1:] != occurrences[:-1]
    new[ends[:-1]] = True  # a lexeme's first occurrence starts a run even if the doc repeats
    at = np.flatnonzero(new)
    tfs = np.diff(np.append(at, len(occurrences))).astype(np.int32)
    starts = np.searchsorted(at, np.concatenate([[0], ends]))
    return Postings(lexemes, starts.astype(np.int64), occurrences[at].astype(np.int64), tfs)


class MemoryFilter(Protocol):
    """Which memories a search covers (engine/retrieval/filters.py's `Filters`): tiers, and a kind,
    category, agent and user when given. Crosses the port as values, never as SQL."""

    @property
    def tiers(self) -> tuple[str, ...]: ...
    @property
    def kind(self) -> str | None: ...
    @property
    def category(self) -> str | None: ...
    @property
    def agent(self) -> str | None: ...
    @property
    def user(self) -> str | None: ...


FILTER_FIELDS = ("kind", "category", "agent", "user")  # a MemoryFilter's fields beside the tiers


class KeywordIndex(Protocol):
    """Full-text search over memories, messages, rules and flows."""

    # -- memories --------------------------------------------------------------------------------
    def doc_freq(self, conn: Connection, match: str) -> int:
        """How many memories the words index finds for `match` (one quoted term)."""
        ...

    def top(
        self, conn: Connection, index: FtsIndex, match: str, limit: int, above: int | None = None
    ) -> list[tuple[int, float]]:
        """The `limit` best (memory id, bm25) for `match`, unfiltered; `above`: ids above it only."""
        ...

    def top_where(
        self,
        conn: Connection,
        index: FtsIndex,
        match: str,
        filters: MemoryFilter,
        limit: int,
        above: int | None = None,
    ) -> list[tuple[int, float]]:
        """Like `top`, among memories passing `filters`."""
        ...

    def passing(self, conn: Connection, ids: Sequence[int], filters: MemoryFilter) -> set[int]:
        """The ids among `ids` whose memory passes `filters`, driven from the list."""
        ...

    def postings(self, conn: Connection) -> Postings:
        """Every lexeme of the words index with the memories holding it (the keyword matrix's
        load): read in bulk, a few seconds at 1M memories."""
        ...

    def rank_of(
        self, conn: Connection, index: FtsIndex, match: str, filters: MemoryFilter, memory_id: int
    ) -> tuple[int | None, int]:
        """(1-based rank of the memory among matches passing `filters`, or None; how many match)."""
        ...

    def score_of(self, conn: Connection, index: FtsIndex, match: str, memory_id: int) -> float | None:
        """The memory's bm25 for `match` (None: it does not match)."""
        ...

    def has(self, conn: Connection, index: FtsIndex, match: str, memory_id: int) -> bool:
        """Whether the memory's indexed tokens match `match`."""
        ...

    def contains(self, conn: Connection, memory_id: int, text: str) -> bool:
        """Whether the memory's content holds `text` exactly (case-sensitive): terms too short
        for the trigram index."""
        ...

    # -- the episodic log ---------------------------------------------------------------------------
    def messages(
        self, conn: Connection, index: FtsIndex, match: str, scope: MessageScope, limit: int
    ) -> list[Any]:
        """Best-first rows `m.*, s.title AS session_title` of messages `m` (joined to their
        session `s`) matching `match` within `scope`."""
        ...

    # -- rules and flows -------------------------------------------------------------------------------
    def match_ids(self, conn: Connection, table: FtsTable, match: str, limit: int) -> list[tuple[int, float]]:
        """(id, bm25) of rules or flows matching an already-quoted `match`, best first."""
        ...


class VectorStore(Protocol):
    """One float32 embedding per memory with the filter fields beside it, so a filtered KNN still
    returns k rows. Embeddings cross this boundary as float32 bytes."""

    def put(
        self,
        conn: Connection,
        memory_id: int,
        embedding: bytes,
        tier: str,
        kind: str,
        category: str,
        agent: str,
        user: str,
        model: str | None = None,
    ) -> bool:
        """Store (or replace) the memory's vector and its filter fields. With `model`: only if the
        store's model tag names it, read inside the caller's write (a process that has not yet seen
        a reembed's switch stores no vector of the old model); returns whether it was stored."""
        ...

    def delete(self, conn: Connection, memory_ids: Sequence[int]) -> None: ...

    def model_of(self, conn: Connection) -> str:
        """The store's model tag as `conn` sees it (any connection of the store, a reader's too)."""
        ...

    def knn(
        self, conn: Connection, query: bytes, k: int, filters: MemoryFilter, model: str | None = None
    ) -> list[tuple[int, float]]:
        """Exact top-k (memory id, cosine distance) among vectors passing `filters` (applied to
        the filter fields stored beside each vector). With `model`: no rows unless the store's
        model tag, read in the same snapshot as the vectors, names it (the query's model)."""
        ...

    def distances(self, conn: Connection, query: bytes, ids: Sequence[int]) -> list[tuple[int, float]]:
        """(memory id, cosine distance) for those of `ids` that have a vector."""
        ...

    def count_closer(self, conn: Connection, query: bytes, distance: float, filters: MemoryFilter) -> int:
        """How many vectors passing `filters` are closer to `query` than `distance`."""
        ...

    def embedding(self, conn: Connection, memory_id: int) -> bytes | None: ...

    def entries(self, conn: Connection, ids: Sequence[int]) -> list[Any]:
        """Rows (memory_id, embedding, tier, kind, category, agent, user) for those of `ids`
        that have a vector (any number of ids: chunked here)."""
        ...

    def scan(self, conn: Connection, batch: int = 4096) -> Iterator[list[Any]]:
        """Every (memory_id, embedding), in batches."""
        ...

    def reader(self, path: Path) -> AbstractContextManager[Any]:
        """A private read-only connection holding one snapshot (a long load must not hold the
        engine's own connection)."""
        ...

    def prepare_switch(self, write: Callable[[Callable[[Connection], object]], object], dim: int) -> None:
        """Before a reembed's switch, in writes of its own (`write` is the store's): whatever can
        be built ahead (PostgreSQL: the new table and its HNSW index), so the switch is short."""
        ...

    def after_switch(self, write: Callable[[Callable[[Connection], object]], object]) -> None:
        """After the switch committed: checks that need no writer to wait."""
        ...

    def drop_prepared(self, conn: Connection) -> None:
        """A reembed given up: what prepare_switch built goes."""
        ...

    def switch(self, conn: Connection, dim: int) -> int:
        """A reembed's switch, inside the caller's write: replace every stored vector by the staged
        one (`vector_staging`), the table now `dim` wide, filter fields from the memories as they
        are now; the staged rows are left for the caller to clear. Returns how many vectors."""
        ...
