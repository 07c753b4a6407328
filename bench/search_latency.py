"""Hybrid search latency at scale, the query's embedding excluded, with and without filters:
the in-memory vector matrix (a long-lived engine's path) beside vec0's float32 brute-force scan
(the plain approach), measured in the same run, plus the matrix's recall@10 against exact vec0.

    python bench/search_latency.py [--sizes 10000,100000] [--queries 200]

Databases are built once under bench/out/latency/ with a synthetic corpus (bench/common.py)
through the engine API, and reused by later runs.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from common import SyntheticCorpus, TableEmbedder, machine, out_dir, pct, write_section

from engine import FixedClock, open_engine
from engine.config import Settings
from engine.retrieval.filters import Filters

FILTERS = {
    "no filter": {},
    "agent": {"agent": "coder"},
    "agent + category": {"agent": "coder", "category": "decision"},
    "tier archived": {"tier": "archived"},
}


def build(path: Path, n: int, corpus: SyntheticCorpus, emb: TableEmbedder) -> None:
    if path.exists():
        return
    tmp = path.with_suffix(".building")
    for s in ("", "-wal", "-shm"):
        Path(str(tmp) + s).unlink(missing_ok=True)
    eng = open_engine(tmp, embedder=emb, clock=FixedClock("2026-01-01T00:00:00Z"), actor="bench")
    step = 5000
    t0 = time.perf_counter()
    for start in range(0, n, step):
        m = min(step, n - start)
        items = corpus.items(start, m)
        emb.register([i["content"] for i in items], corpus.vectors(start, m))
        eng.add_memories(items, dedup=False, batch_size=1000)
        emb.table.clear()
        print(f"  built {start + m:,}/{n:,} ({time.perf_counter() - t0:.0f} s)", flush=True)
    eng.close()
    os.replace(tmp, path)


def engine_for(path: Path, emb, matrix: bool):
    s = Settings()
    if matrix:
        s = replace(s, search=replace(s.search, matrix_after=1, keyword_matrix_after=1))
    else:  # the plain approach: vec0 brute force, every query word
        s = replace(
            s,
            search=replace(
                s.search, matrix_after=0, keyword_matrix_after=0, common_term_share=0.0, keyword_rows=0
            ),
        )
    return open_engine(
        path, embedder=emb, clock=FixedClock("2026-01-10T00:00:00Z"), settings=s, actor="bench", load="now"
    )


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_size(n: int, nq: int, filters: dict = FILTERS) -> list[str]:
    corpus = SyntheticCorpus()
    emb = TableEmbedder()
    path = out_dir("latency") / f"mem{n}.db"
    build(path, n, corpus, emb)
    # queries: text from the same vocabulary; vectors near stored ones (so neighbours exist)
    queries = corpus.queries(nq)
    rng = np.random.default_rng(5)
    base = corpus.vectors(int(rng.integers(0, max(1, n - nq))), nq)
    qv = base + rng.standard_normal(base.shape).astype(np.float32) * 0.02
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    emb.register(queries, qv)

    rows = []
    before = rss_mb()
    fast = engine_for(path, emb, matrix=True)
    t0 = time.perf_counter()
    fast.vectors.keep_in_memory()
    load_s = time.perf_counter() - t0
    grown = rss_mb() - before
    t0, before = time.perf_counter(), rss_mb()
    fast.retrieval.keyword.keep_in_memory()
    kload_s = time.perf_counter() - t0
    kgrown = rss_mb() - before
    plain = engine_for(path, emb, matrix=False)
    recall, agree, whole = [], [], []
    for fname, f in filters.items():
        filt = Filters.make(f.get("tier"), None, f.get("category"), f.get("agent"), None)
        lat = {"matrix": [], "vec0": [], "kv_matrix": [], "kv_vec0": []}
        for i, q in enumerate(queries):
            got_ids = {}
            for name, eng in (
                (("matrix", fast), ("vec0", plain)) if i % 2 else (("vec0", plain), ("matrix", fast))
            ):
                t1 = time.perf_counter()
                res = eng.search(q, k=10, mode="hybrid", record_access=False, **f)
                lat[name].append(time.perf_counter() - t1)
                got_ids[name] = {h.id for h in res.hits}
            if got_ids["vec0"]:
                agree.append(len(got_ids["matrix"] & got_ids["vec0"]) / len(got_ids["vec0"]))
                whole.append(got_ids["matrix"] == got_ids["vec0"])
            t1 = time.perf_counter()
            got = fast.vectors.knn(qv[i], 10, filt)
            lat["kv_matrix"].append(time.perf_counter() - t1)
            t1 = time.perf_counter()
            want = plain.vectors.knn(qv[i], 10, filt)
            lat["kv_vec0"].append(time.perf_counter() - t1)
            if want:
                kth = want[-1][1]
                recall.append(
                    len({m for m, _ in got} & {m for m, _ in want} | {m for m, s in got if s >= kth - 1e-6})
                    / len(want)
                )

        def r(k: str, q: float, lat: dict = lat) -> float:
            return pct(lat[k], q) * 1000

        rows.append(
            f"| {n:,} | {fname} | {r('matrix', 50):.1f} | {r('matrix', 95):.1f} | "
            f"{r('vec0', 50):.1f} | {r('vec0', 95):.1f} | "
            f"{r('vec0', 50) / r('matrix', 50):.1f}x | {r('kv_matrix', 50):.1f} | "
            f"{r('kv_vec0', 50):.1f} |"
        )
        print(rows[-1], flush=True)
    # an agent's search also records the access (one write transaction)
    lat_w = []
    for q in queries[:50]:
        t1 = time.perf_counter()
        fast.search(q, k=10, mode="hybrid", record_access=True)
        lat_w.append(time.perf_counter() - t1)
    rows.append(
        f"| {n:,} | no filter, record_access=True (an agent's search, one write) | "
        f"{pct(lat_w, 50) * 1000:.1f} | {pct(lat_w, 95) * 1000:.1f} | | | | | |"
    )
    from engine.retrieval.query import plan

    matches = [
        plain.store.read_one(
            "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (plan(q).match,)
        )[0]
        for q in queries[:50]
    ]
    fast.close()
    plain.close()
    notes = (
        f"{n:,}: vector matrix load {load_s:.2f} s, +{grown:.0f} MB RSS; keyword matrix load "
        f"{kload_s:.2f} s, +{kgrown:.0f} MB (both in the background in the console); recall@10 of "
        f"the engine's KNN vs exact vec0 {np.mean(recall):.4f} over {len(recall)} filtered/unfiltered "
        f"queries; the engine's hybrid top 10 is the plain path's (all words, every match, exact "
        f"KNN) for {100 * np.mean(whole):.1f}% of queries and holds {100 * np.mean(agree):.1f}% of "
        f"its hits; a query's words match a median of "
        f"{int(np.median(matches)):,} memories ({100 * np.median(matches) / n:.0f}%: Zipf-worded "
        f"text, a hard case for FTS5, which scores every match)"
    )
    print(notes, flush=True)
    return rows + [notes]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--section", default="search_latency", help="BENCHMARKS.md section to write")
    ap.add_argument(
        "--filters", default=",".join(FILTERS), help="comma-separated subset of: " + ", ".join(FILTERS)
    )
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    chosen = {k: FILTERS[k.strip()] for k in args.filters.split(",")}
    rows, notes = [], []
    for n in sizes:
        out = run_size(n, args.queries, chosen)
        rows += out[:-1]
        notes.append(out[-1])
    if args.no_write:
        return
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    body = f"""## Search latency, {" and ".join(f"{n:,}" for n in sizes)} memories (bench/search_latency.py)

Machine: {machine()}.
Synthetic fleet memory (8 agents, 8 categories, 60% active / 20% core / 20% archived; Zipf-worded
text, 384-d vectors around 512 topics) written through `add_memories`. Hybrid `engine.retrieval.search(k=10,
record_access=False)` wall time, {args.queries} queries per row, the query's embedding excluded
(a table lookup). "engine": the defaults of a long-lived engine — the in-memory vector matrix
(`matrix_after`; sign-bit candidates + exact rescoring past `bits_from`) and the in-memory keyword
matrix (`keyword_matrix_after`: every query word over every match, FTS5's BM25 from postings in
memory, engine/retrieval/keyword_matrix.py); "plain": vec0's float32 brute-force KNN and FTS5
scoring every query word over every match. Both engines run alternately in the same process, so contention hits both alike. The last
two columns are the vector retriever alone (KNN of 10). Load average at the end of the run: {load}
(when other jobs share the 2 cores, absolute times swing with their load from row to row; the
speed-up column, measured alternately, is the stable figure).

| memories | filter | hybrid p50 ms (engine) | p95 ms | hybrid p50 ms (plain) | p95 ms | speed-up p50 | KNN p50 ms (matrix) | KNN p50 ms (vec0) |
|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

{chr(10).join("- " + x for x in notes)}

Databases of 1M are seeded by `bench/build_direct.py --n 1000000` (~3 min; the same corpus written
straight to SQLite, since the API path takes over an hour here); this script reuses the file.
Both keyword sides rank every word over every match with the same BM25 and the same tie order
(the newer memory first), so what is left of disagreement is the vector side's sign-bit candidates.
A one-shot engine (no matrices) bounds the keyword cost instead: bench/keyword_bounds.py.
Before the keyword matrix (2026-11-22 05:44 UTC, same 1M file, the one-shot bounds in the long-lived
engine too): hybrid p50/p95 87.7/224.1 ms no filter, 88.9/185.9 agent, 64.4/152.2 agent + category,
94.5/209.8 tier archived; 70.8% of the plain path's top-10 hits.
"""
    write_section(args.section, body)


if __name__ == "__main__":
    main()
