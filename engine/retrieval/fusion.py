"""Fusing the keyword and vector rankings into one score, then weighting by the memory's state.

Default: score-aware convex fusion. Each retriever's scores are put on a 0..1 scale for this query
— BM25 divided by the best BM25 of the query's candidates; cosine similarity min-max scaled between
the best and the last of the vector candidates — and mixed. The candidates are a fixed pool
(search.candidates from each retriever, whatever k is), so the first n hits are the same for every
k >= n; a k past what the pool yields takes deeper candidates, scored on the pool's scale and ranked
after it (engine/retrieval/search.py):

    fused = keyword_share · bm25' + (1 - keyword_share) · cos'

A memory one retriever did not return gets 0 from it. Unlike Reciprocal Rank Fusion this keeps how
much better the top keyword match is than the next ones: on LoCoMo, plain RRF loses to BM25 alone
at k ≤ 10, convex fusion beats both retrievers at every k (BENCHMARKS.md). `fusion = "rrf"` keeps
weighted RRF (Σ w_r / (rrf_k + rank_r)) available. bench/locomo.py judges changes to these.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from engine.config import SearchSettings
from engine.retrieval import derived
from engine.retrieval.query import named_day, named_time
from engine.types import Breakdown


@dataclass(frozen=True)
class Named:
    """Whom and when a query names: one of its candidates' speakers, a month and/or a year (and a
    day beside the month), and whether it asks *when* something happened."""

    speaker: str | None = None
    month: int | None = None
    year: int | None = None
    day: int | None = None
    asks_when: bool = False

    def __bool__(self) -> bool:
        return bool(self.speaker or self.month or self.year or self.asks_when)


@dataclass(frozen=True)
class Said:
    """Who said a memory and when, as the boosts read it: metadata.speaker / metadata.date where
    set, else derived (engine/retrieval/derived.py: a leading "Name:", created_at); and whether its
    text carries a time expression."""

    speaker: str | None = None
    month: int | None = None
    year: int | None = None
    day: int | None = None
    timed: bool = False


@dataclass
class FusionContext:
    """What a fused score was computed against (so `explain` can score any memory the same way)."""

    method: str  # "convex" | "rrf"
    bm25_top: float | None  # best BM25 among the keyword candidates
    sim_top: float | None  # best cosine among the vector candidates
    sim_low: float | None  # last (lowest) cosine among the vector candidates
    fused: dict = field(default_factory=dict, compare=False)  # every candidate's fused score
    named: Named = field(default_factory=Named, compare=False)  # whom / when the query names


def context(
    keyword: dict[int, tuple[int, float]], vector: dict[int, tuple[int, float]], s: SearchSettings
) -> FusionContext:
    kw = [b for _, b in keyword.values()]
    vs = [c for _, c in vector.values()]
    return FusionContext(s.fusion, max(kw) if kw else None, max(vs) if vs else None, min(vs) if vs else None)


def one(
    ctx: FusionContext, s: SearchSettings, bm25: tuple[int, float] | None, vec: tuple[int, float] | None
) -> float:
    """The fused score of one memory from its (rank, score) in each retriever (None: absent)."""
    if ctx.method == "rrf":
        out = 0.0
        if bm25 is not None:
            out += s.keyword_weight / (s.rrf_k + bm25[0])
        if vec is not None:
            out += s.vector_weight / (s.rrf_k + vec[0])
        return out
    a = s.keyword_share
    out = 0.0
    if bm25 is not None and ctx.bm25_top is not None:
        out += a * (bm25[1] / ctx.bm25_top if ctx.bm25_top > 0 else 1.0)
    if vec is not None and ctx.sim_top is not None:
        low = ctx.sim_low if ctx.sim_low is not None else 0.0  # set whenever sim_top is
        span = ctx.sim_top - low
        scaled = (vec[1] - low) / span if span > 1e-9 else 1.0
        out += (1.0 - a) * min(1.0, max(0.0, scaled))
    return out


def fuse(
    keyword: dict[int, tuple[int, float]],
    vector: dict[int, tuple[int, float]],
    s: SearchSettings,
    ctx: FusionContext | None = None,
) -> tuple[dict[int, float], FusionContext]:
    """{memory_id: fused} from {memory_id: (rank 1-based, score)} of each retriever. `ctx`: scale
    against a given pool's context (candidates past the pool are scored on the pool's scale, so
    asking for more hits never rescales the first ones: issue #26)."""
    ctx = ctx if ctx is not None else context(keyword, vector, s)
    ids = dict.fromkeys([*keyword, *vector])
    return {m: one(ctx, s, keyword.get(m), vector.get(m)) for m in ids}, ctx


_ISO_DATE = re.compile(r"((?:19|20)\d\d)-(0[1-9]|1[0-2])\b")
_ISO_DAY = re.compile(r"(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?!\d)")


def when(metadata: dict, created_at: float | None) -> tuple[int | None, int | None]:
    """(month, year) a memory is dated: its metadata's `date` if that names one (a conversation
    turn's session date), else when it was written."""
    d = metadata.get("date") if isinstance(metadata, dict) else None
    if isinstance(d, str):
        iso = _ISO_DATE.match(d.strip())
        if iso:
            return int(iso.group(2)), int(iso.group(1))
        m, y = named_time(d)
        if m or y:
            return m, y
    if created_at:
        t = datetime.fromtimestamp(float(created_at), UTC)
        return t.month, t.year
    return None, None


def day_of(metadata: dict, created_at: float | None) -> int | None:
    """The day of the month a memory is dated (as `when`: its metadata's date, else when written)."""
    d = metadata.get("date") if isinstance(metadata, dict) else None
    if isinstance(d, str) and d.strip():
        iso = _ISO_DAY.match(d.strip())
        if iso:
            return int(iso.group(1))
        if any(named_time(d)):
            return named_day(d)
    got = derived.day_of(created_at)
    return got[2] if got else None


def speaker_of(metadata: dict, content: str | None = None, role: str | None = None) -> str | None:
    """metadata.speaker, else the speaker a leading "Name:" of the text names, else the role of
    the message the memory was made from ("user", "assistant")."""
    sp = metadata.get("speaker") if isinstance(metadata, dict) else None
    if isinstance(sp, str) and sp.strip():
        return sp
    return derived.speaker_in(content) or (role if isinstance(role, str) and role.strip() else None)


def said(
    metadata: dict, content: str | None, created_at: float | None, n: Named, role: str | None = None
) -> Said:
    """The fields of one memory the boosts for `n` read (only those `n` needs are derived)."""
    month, year = when(metadata, created_at) if (n.month or n.year) else (None, None)
    return Said(
        speaker_of(metadata, content, role) if n.speaker else None,
        month,
        year,
        day_of(metadata, created_at) if n.day else None,
        derived.has_time(content) if n.asks_when else False,
    )


def boost(n: Named, m: Said, s: SearchSettings) -> float:
    """Factor on a memory's fused score: x(1 + speaker_boost) when said by the one speaker the
    question names, x(1 + date_boost) when dated in the month / year (and day) it names,
    x(1 + time_boost) when the question asks when and the memory says when. Questions about a
    person or a time mostly want that person's words, from then; a "when" question's answer is
    the turn that carries a time ("yesterday", "last June")."""
    f = 1.0
    if n.speaker and m.speaker is not None and m.speaker.lower() == n.speaker.lower():
        f *= 1.0 + s.speaker_boost
    if (
        (n.month or n.year)
        and (n.month is None or m.month == n.month)
        and (n.year is None or m.year == n.year)
        and (n.day is None or m.day == n.day)
    ):
        f *= 1.0 + s.date_boost
    if n.asks_when and m.timed:
        f *= 1.0 + s.time_boost
    return f


def rrf(keyword: dict[int, int], vector: dict[int, int], s: SearchSettings) -> dict[int, float]:
    """Weighted Reciprocal Rank Fusion from {memory_id: rank (1-based)} of each retriever."""
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
    return fused * (
        base + s.strength_weight * strength + s.importance_weight * importance + s.recency_weight * rec
    )


def weight_formula(s: SearchSettings) -> str:
    """`weight()` in words, with the configured weights."""
    base = 1.0 - s.strength_weight - s.importance_weight - s.recency_weight
    return (
        f"final = fused × ({base:.2f} + {s.strength_weight:.2f}·strength + "
        f"{s.importance_weight:.2f}·importance + {s.recency_weight:.2f}·recency)"
    )


def weight_numbers(b: Breakdown, s: SearchSettings) -> str:
    """`weight()` with one hit's numbers: how its final score came out of its breakdown."""
    base = 1.0 - s.strength_weight - s.importance_weight - s.recency_weight
    factor = base + s.strength_weight * b.strength + s.importance_weight * b.importance
    factor += s.recency_weight * b.recency
    parts = [f"{b.rrf:.4f} × boost {b.boost:.2f}" if b.boost != 1.0 else f"{b.rrf:.4f}"]
    if b.context:
        parts.append(f"context {b.context:.4f}")
    fused = f"({' + '.join(parts)})" if len(parts) > 1 else parts[0]
    return (
        f"{fused} × ({base:.2f} + {s.strength_weight:.2f}×{b.strength:.3f} + "
        f"{s.importance_weight:.2f}×{b.importance:.2f} + {s.recency_weight:.2f}×{b.recency:.3f})"
        f" = {b.rrf * b.boost + b.context:.4f} × {factor:.4f} = {b.final:.4f}"
    )
