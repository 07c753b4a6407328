"""Fusing the keyword and vector rankings into one score, then weighting by the memory's state.

Weighted Reciprocal Rank Fusion: fused = Σ w_r / (rrf_k + rank_r). Documented defaults live in
config.SearchSettings; bench/locomo.py is how changes to them are judged.
"""
from __future__ import annotations

import math

from .config import SearchSettings


def rrf(keyword: dict[int, int], vector: dict[int, int], s: SearchSettings) -> dict[int, float]:
    """{memory_id: fused} from {memory_id: rank (1-based)} of each retriever."""
    out: dict[int, float] = {}
    for mid, rank in keyword.items():
        out[mid] = out.get(mid, 0.0) + s.keyword_weight / (s.rrf_k + rank)
    for mid, rank in vector.items():
        out[mid] = out.get(mid, 0.0) + s.vector_weight / (s.rrf_k + rank)
    return out


def recency(now: float, last_active: float, s: SearchSettings) -> float:
    age_days = max(0.0, now - last_active) / 86400.0
    return math.exp(-math.log(2) * age_days / s.recency_half_life_days)


def weight(fused: float, strength: float, importance: float, rec: float, s: SearchSettings) -> float:
    base = 1.0 - s.strength_weight - s.importance_weight - s.recency_weight
    return fused * (base + s.strength_weight * strength + s.importance_weight * importance
                    + s.recency_weight * rec)
