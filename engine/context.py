"""The one context the façade builds and every service receives: what a service may use, named.

Services keep a reference to this object, not copies of its fields, so an operator (or a test)
swapping `settings` or `actor` on the engine is seen by every service at once.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    actor: str  # recorded on every mutation
    embedder: EmbedderHandle
    vectors: VectorIndex  # vector search (the in-memory matrix or the store's vector index)
    path: Path  # the database file; curator reports live beside it
