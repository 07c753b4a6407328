"""Score bars: one line per factor of a search hit's breakdown, drawn with block characters."""

from __future__ import annotations

from rich.text import Text

WIDTH = 20


def bar(value: float, width: int = WIDTH) -> str:
    v = 0.0 if value is None else max(0.0, min(1.0, float(value)))
    full = int(v * width)
    frac = v * width - full
    part = " ▏▎▍▌▋▊▉"[int(frac * 8)] if full < width else ""
    return ("█" * full + part).ljust(width)


def breakdown_text(b, max_rrf: float | None = None) -> Text:
    """Bars for a Breakdown (engine.types). The fused score is scaled to the best hit's so bars compare."""
    rows = []
    rrf_scale = max_rrf or b.rrf or 1.0
    rows.append(("keyword", _rank_frac(b.bm25_rank), f"rank {b.bm25_rank}" if b.bm25_rank else "no match"))
    rows.append(
        (
            "vector",
            b.vector_similarity or 0.0,
            f"rank {b.vector_rank} · sim {b.vector_similarity:.3f}" if b.vector_rank else "not ranked",
        )
    )
    rows.append(("fused", (b.rrf / rrf_scale) if rrf_scale else 0.0, f"{b.rrf:.4f}"))
    ctx = getattr(b, "context", 0.0) or 0.0
    if ctx:  # lifted by a neighbouring memory of the same session (see engine/search.py)
        rows.append(("context", ctx / rrf_scale if rrf_scale else 0.0, f"+{ctx:.4f}"))
    rows.append(("strength", b.strength, f"{b.strength:.3f}"))
    rows.append(("importance", b.importance, f"{b.importance:.2f}"))
    rows.append(("recency", b.recency, f"{b.recency:.3f}"))
    t = Text()
    for name, frac, label in rows:
        t.append(f"{name:<12}", style="bold")
        t.append(bar(frac), style="green" if frac >= 0.5 else "yellow" if frac > 0.2 else "red")
        t.append(f" {label}\n")
    t.append(f"{'final':<12}", style="bold")
    t.append(f"{b.final:.5f}", style="bold cyan")
    return t


def _rank_frac(rank: int | None) -> float:
    """Rank 1 → full bar; falls off like RRF's 1/rank."""
    return 0.0 if not rank else 1.0 / (1.0 + 0.25 * (rank - 1))
