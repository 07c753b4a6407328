"""The `vector_staging` table gateway: a reembed's new vectors (engine/embedding/reembed.py) until
the switch moves them into the vector store. Its only writer. Any width: the table is not
searched; schema triggers drop a memory's staged vector when it is deleted or its text changes."""

from __future__ import annotations

from collections.abc import Sequence

from engine.storage.gateways.base import Gateway


class VectorStagingRows(Gateway):
    """Operations on `vector_staging` rows, inside the caller's transaction."""

    def put_many(self, rows: Sequence[tuple[int, bytes]]) -> None:
        """Stage (memory id, float32 bytes) pairs, replacing what was staged for those ids."""
        raise NotImplementedError

    def count(self) -> int:
        """How many memories have a staged vector."""
        raise NotImplementedError

    def missing(self, limit: int) -> list[tuple[int, str]]:
        """Up to `limit` (id, content) of memories without a staged vector, lowest ids first."""
        raise NotImplementedError

    def missing_count(self) -> int:
        """How many memories have no staged vector yet."""
        raise NotImplementedError

    def clear(self) -> None:
        """Drop every staged vector (a finished switch, or a reembed given up)."""
        raise NotImplementedError
