"""The one context the façade builds and every service receives: what a service may use, named.

Services keep a reference to this object, not copies of its fields, so an operator (or a test)
swapping `settings` or `actor` on the engine is seen by every service at once.

The caller is per call: `acting_as(identity)` sets it for the current thread or task only (a
context variable), over the engine-wide default. Two MCP calls from different tokens run at the
same time, each audited under its own caller, with no lock around the call. The caller is a
verified `Identity` (engine/identity.py); `actor` is its audit text (`alice (as ops-lead)`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from engine.clock import Clock
from engine.config import Settings
from engine.identity import Identity

if TYPE_CHECKING:
    from engine.embed import EmbedderHandle
    from engine.retrieval.vectors import VectorIndex
    from engine.storage.port import Storage


@dataclass
class Context:
    store: Storage  # the storage port (reads, writes in one transaction, indexes)
    clock: Clock
    settings: Settings
    default_identity: Identity  # recorded on every mutation made outside `acting_as`
    embedder: EmbedderHandle
    vectors: VectorIndex  # vector search (the in-memory matrix or the store's vector index)
    path: Path  # the database file; curator reports live beside it
    # One variable per engine, so two engines in one process never see each other's caller.
    _acting: ContextVar[Identity | None] = field(
        default_factory=lambda: ContextVar("memconsole_actor", default=None), repr=False
    )

    @property
    def identity(self) -> Identity:
        """Who is making the current call: the `acting_as` identity, else the engine's default."""
        return self._acting.get() or self.default_identity

    @property
    def actor(self) -> str:
        """The current caller as the audit's `actor` text (engine/identity.py `actor_text`)."""
        return self.identity.actor

    @property
    def default_actor(self) -> str:
        return self.default_identity.actor

    @default_actor.setter
    def default_actor(self, value: str) -> None:  # in-process code vouching (engine.py checks)
        self.default_identity = replace(self.default_identity, verified=value, source="operator", label=None)

    @contextmanager
    def acting_as(self, identity: Identity) -> Iterator[None]:
        """Record `identity` on every mutation made by this thread or task inside the block."""
        token = self._acting.set(identity)
        try:
            yield
        finally:
            self._acting.reset(token)
