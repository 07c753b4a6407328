"""Vectors read from PostgreSQL in pgvector's binary form (`vector_send(embedding)`: a big-endian
int16 dimension, an int16 kept at 0, then the float4s big-endian) instead of its text form. The
text form makes the server print every float and the client parse it back: 2,000 vectors cost
~260 ms of client CPU as text and ~20 ms this way (issue #24: a fleet agent's matrix load and every
catch-up read the vectors other agents wrote). Same float32 values, bit for bit."""

from __future__ import annotations

import numpy as np

from engine.errors import EngineError


def sent(column: str) -> str:
    """The SQL reading `column` (a vector) in its binary form; NULL stays NULL."""
    return f"vector_send({column})"


def array_of(data: bytes | memoryview) -> np.ndarray:
    """A vector_send value as float32 (native order)."""
    b = memoryview(data)
    dim = int.from_bytes(b[:2], "big")
    if len(b) != 4 + 4 * dim:
        raise EngineError(f"a stored vector is damaged ({len(b)} bytes for {dim} dimensions)")
    return np.frombuffer(b, dtype=">f4", offset=4).astype(np.float32)


def blob_of(data: bytes | memoryview | None) -> bytes | None:
    """A vector_send value as the engine's float32 blob (None for NULL)."""
    return None if data is None else array_of(data).tobytes()
