"""What the keyword retriever's cost bounds buy and cost at scale (engine/retrieval/keyword.py):
hybrid and keyword-only latency, and how much of the top 10 stays the same as scoring every query
word over every match, for several `keyword_rows` budgets of a one-shot engine and for a long-lived
engine's in-memory keyword matrix, on one engine (settings swapped per query, the order rotated so
contention hits each alike).

    python bench/keyword_bounds.py [--n 1000000] [--queries 100]

The database is bench/search_latency.py's (`bench/build_direct.py --n 1000000` seeds 1M).
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace

import numpy as np
from common import SyntheticCorpus, TableEmbedder, machine, out_dir, pct, write_section

from engine import FixedClock, open_engine
from engine.config import Settings
from engine.retrieval.filters import Filters

BUDGETS = {"40,000": 40_000, "80,000": 80_000, "150,000 (default)": 150_000, "no bound": 0}
MATRIX = "in-memory keyword matrix (long-lived engines)"


def configs(base: Settings) -> dict[str, Settings]:
    out = {
        f"keyword_rows {k}": replace(base, search=replace(base.search, keyword_rows=v))
        for k, v in BUDGETS.items()
    }
    out[MATRIX] = base
    out["every word, every match"] = replace(
        base, search=replace(base.search, keyword_rows=0, common_term_share=0.0)
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    path = out_dir("latency") / f"mem{args.n}.db"
    if not path.exists():
        raise SystemExit(f"{path} is missing: run bench/build_direct.py --n {args.n} first")
    corpus, emb = SyntheticCorpus(), TableEmbedder()
    queries = corpus.queries(args.queries)
    rng = np.random.default_rng(5)
    base = corpus.vectors(int(rng.integers(0, max(1, args.n - args.queries))), args.queries)
    qv = base + rng.standard_normal(base.shape).astype(np.float32) * 0.02
    emb.register(queries, qv / np.linalg.norm(qv, axis=1, keepdims=True))
    s = Settings()
    eng = open_engine(
        path,
        embedder=emb,
        clock=FixedClock("2026-01-10T00:00:00Z"),
        actor="bench",
        settings=replace(s, search=replace(s.search, matrix_after=1, keyword_matrix_after=0)),
        load="now",
    )
    eng.vectors.keep_in_memory()
    kr = eng.retrieval.keyword
    kr.keep_in_memory()
    kmat, kr.matrix = kr.matrix, None  # on for its own row only
    cfgs = configs(eng.settings)
    names = list(cfgs)
    hyb = {k: [] for k in names}
    kwl = {k: [] for k in names}
    tops: dict[str, list[set]] = {k: [] for k in names}
    ktops: dict[str, list[set]] = {k: [] for k in names}
    windowed = 0
    for i, q in enumerate(queries):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            eng.settings = cfgs[name]
            kr.matrix = kmat if name == MATRIX else None
            t0 = time.perf_counter()
            res = eng.search(q, k=10, mode="hybrid", record_access=False)
            hyb[name].append(time.perf_counter() - t0)
            tops[name].append({h.id for h in res.hits})
            t0 = time.perf_counter()
            p = eng.retrieval.keyword_plan(q)
            ranks = eng.retrieval.keyword_ranks(p, Filters(), 10)
            kwl[name].append(time.perf_counter() - t0)
            ktops[name].append(set(ranks))
            if name.endswith("(default)") and p.recent_from is not None:
                windowed += 1
    ref = "every word, every match"
    rows = []
    for name in names:
        agree = np.mean([len(a & b) / max(len(b), 1) for a, b in zip(tops[name], tops[ref], strict=True)])
        kagree = np.mean([len(a & b) / max(len(b), 1) for a, b in zip(ktops[name], ktops[ref], strict=True)])
        rows.append(
            f"| {name} | {pct(hyb[name], 50) * 1000:.1f} | {pct(hyb[name], 95) * 1000:.1f} | "
            f"{max(hyb[name]) * 1000:.0f} | "
            f"{pct(kwl[name], 50) * 1000:.1f} | {pct(kwl[name], 95) * 1000:.1f} | "
            f"{100 * agree:.1f}% | {100 * kagree:.1f}% |"
        )
        print(rows[-1], flush=True)
    eng.close()
    if args.no_write:
        return
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    write_section(
        "keyword_bounds",
        f"""## Keyword cost bounds at {args.n:,} memories (bench/keyword_bounds.py)

Machine: {machine()}; load average at the end {load}.
The synthetic corpus of bench/search_latency.py (Zipf-worded: a query's words match about half of
all memories), {args.queries} queries, no filter, the in-memory vector matrix in every row, so the
rows differ only in the keyword side. "Agreement": the share of the top 10 that is also in the top
10 of scoring every query word over every match (the last row) — hybrid, then keyword alone. On
this text many memories tie on BM25 for a common word, so even small changes reorder ties; the
rows are for comparing budgets with each other. Words in >10% of memories are left out in the
`keyword_rows` rows (a one-shot engine's bounds); the default budget windowed {windowed} of the
{args.queries} queries. The keyword matrix row is what a long-lived engine (console, MCP server)
does instead: every word over every match from postings in memory, FTS5's BM25 to the bit.

| keyword side | hybrid p50 ms | p95 ms | max ms | keyword alone p50 ms | p95 ms | hybrid top-10 agreement | keyword top-10 agreement |
|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

For one-shot engines the default (150,000) keeps the top 10 of the "no bound" row and leaves the
median alone; it only caps the few queries whose kept words match more than 150,000 memories (the
max column). Tighter budgets cut p95 too, at a visible cost in agreement, so they are not the default.
""",
    )


if __name__ == "__main__":
    main()
