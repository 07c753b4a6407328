"""Sign bits of vectors: the in-memory matrix's prefilter past `bits_from` rows (each row's signs
as 64-bit words; candidates by Hamming distance, then rescored exactly: vector_matrix.py)."""

from __future__ import annotations

import numpy as np

PACK_BLOCK = 65_536  # rows per packing step (bounds the temporary boolean array)


def pack(mat: np.ndarray) -> np.ndarray:
    """Sign bits of each row as (dim/64, rows) uint64 words."""
    return np.packbits(mat > 0, axis=1).view(np.uint64).T


def packed(mat: np.ndarray) -> np.ndarray:
    """`pack` of every row, PACK_BLOCK rows at a time, into one (dim/64, rows) array."""
    n = len(mat)
    bits = np.empty((mat.shape[1] // 64, n), dtype=np.uint64)
    for j in range(0, n, PACK_BLOCK):
        bits[:, j : j + PACK_BLOCK] = pack(mat[j : j + PACK_BLOCK])
    return bits


def hamming(bits: np.ndarray, n: int, q: np.ndarray) -> np.ndarray:
    """Hamming distance of `q`'s signs to each of the first `n` packed rows."""
    qb = pack(q[None, :])[:, 0]
    h = np.bitwise_count(bits[0, :n] ^ qb[0]).astype(np.uint16)
    for i in range(1, len(qb)):
        h += np.bitwise_count(bits[i, :n] ^ qb[i])
    return h
