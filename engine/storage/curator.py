"""The part of the storage port the curator's scan needs beyond portable SQL: every stored vector
at once. Comparing each new memory with every mergeable one is one matrix product, so the scan
wants the whole vector table as one float32 matrix; how fast that read can be depends on the
backend's storage layout."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from engine.storage.port import Connection


class CuratorReads(Protocol):
    def all_vectors(self, conn: Connection) -> tuple[np.ndarray, np.ndarray] | None:
        """(ids, matrix) of every stored vector, read the fast way; None when that way cannot be
        trusted here (the caller then reads through the vector store, slower and always right)."""
        ...
