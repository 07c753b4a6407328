"""The one context the façade builds and every service receives: what a service may use, named.

Services keep a reference to this object, not copies of its fields, so an operator (or a test)
swapping `settings` or `actor` on the engine is seen by every service at once.

The actor is per call: `acting_as(name)` sets it for the current thread or task only (a context
variable), over the engine-wide default. Two MCP calls from different tokens run at the same
time, each audited under its own caller, with no lock around the call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from engine.clock import Clock
from engine.config import Settings

if TYPE_CHECKING:
    from engine.embed import EmbedderHandle
    from engine.retrieval.vectors import VectorIndex
    from engine.storage.port import Storage


@dataclass
class Context:
    store: Storage  # the storage port (reads, writes in one transaction, indexes)
    clock: Clock
    settings: Settings
    default_actor: str  # recorded on every mutation made outside `acting_as`
    embedder: EmbedderHandle
    vectors: VectorIndex  # vector search (the in-memory matrix or the store's vector index)
    path: Path  # the database file; curator reports live beside it
    # One variable per engine, so two engines in one process never see each other's caller.
    _acting: ContextVar[str | None] = field(
        default_factory=lambda: ContextVar("memconsole_actor", default=None), repr=False
    )

    @property
    def actor(self) -> str:
        """Who is making the current call: the `acting_as` name, else the engine's default."""
        return self._acting.get() or self.default_actor

    @actor.setter
    def actor(self, value: str) -> None:
        self.default_actor = value

    @contextmanager
    def acting_as(self, actor: str) -> Iterator[None]:
        """Record `actor` on every mutation made by this thread or task inside the block."""
        token = self._acting.set(actor)
        try:
            yield
        finally:
            self._acting.reset(token)
