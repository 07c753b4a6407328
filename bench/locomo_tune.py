"""Fusion study on LoCoMo: dump each retriever's top candidates once, then score fusion formulas
offline. Parameters are chosen on conversations 0-2 and checked on 3-4 (and vice versa), so a
default is only adopted if it holds on conversations it was not chosen on.

    python bench/locomo_tune.py [--content speaker_caption]
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np
from common import CachedEmbedder, locomo_path, out_dir
from locomo import turn_content, turns

from engine import FixedClock, open_engine
from engine.retrieval.filters import Filters
from engine.retrieval.query import plan

N = 200


def dump(style: str) -> list[dict]:
    path = out_dir("locomo") / f"cands_{style}.json"
    if path.exists():
        return json.loads(path.read_text())
    data = json.loads(locomo_path().read_text(encoding="utf-8"))
    emb = CachedEmbedder(out_dir("locomo") / "embeddings.npz")
    rows = []
    for i, conv in enumerate(data):
        db = out_dir("locomo") / f"tune{i}.db"
        for s in ("", "-wal", "-shm"):
            Path(str(db) + s).unlink(missing_ok=True)
        eng = open_engine(db, embedder=emb, clock=FixedClock("2026-01-01T00:00:00Z"))
        items = [
            {"content": turn_content(t, style), "metadata": {"dia_id": t["dia_id"]}}
            for _, _, t in turns(conv)
        ]
        ids = eng.add_memories(items, dedup=False)
        by_dia = {it["metadata"]["dia_id"]: m for it, m in zip(items, ids, strict=True)}
        for q in conv["qa"]:
            if q.get("category") not in (1, 2, 3, 4):
                continue
            kw = eng.retrieval.keyword_ranks(plan(q["question"]), Filters(), N)
            vec = eng.vectors.knn(eng.retrieval.embed_query(q["question"]), N, Filters())
            rows.append(
                {
                    "conv": i,
                    "cat": q["category"],
                    "ev": [by_dia[e] for e in q["evidence"] if e in by_dia],
                    "kw": [[m, s] for m, (_, s) in kw.items()],
                    "vec": [[m, s] for m, s in vec],
                }
            )
        emb.save()
        eng.close()
    path.write_text(json.dumps(rows))
    return rows


def recall_at(rows, ranker, ks=(1, 5, 10, 20)):
    hits = np.zeros(len(ks))
    for r in rows:
        order = ranker(r)
        ev = set(r["ev"])
        for j, k in enumerate(ks):
            if ev.intersection(order[:k]):
                hits[j] += 1
    return hits / max(1, len(rows))


def single(key):
    return lambda r: [m for m, _ in r[key]]


def rrf(kw_w=1.0, v_w=1.0, k=60.0, depth=50):
    def f(r):
        s = {}
        for i, (m, _) in enumerate(r["kw"][:depth]):
            s[m] = s.get(m, 0) + kw_w / (k + i + 1)
        for i, (m, _) in enumerate(r["vec"][:depth]):
            s[m] = s.get(m, 0) + v_w / (k + i + 1)
        return sorted(s, key=lambda m: -s[m])

    return f


def convex(alpha=0.5, depth=50, norm="max", floor=0.0):
    """alpha·bm25' + (1-alpha)·cos' with per-query normalisation; absent from a list scores 0."""

    def f(r):
        kw, vec = r["kw"][:depth], r["vec"][:depth]
        s = {}
        if kw:
            top = kw[0][1]
            low = kw[-1][1] if norm == "minmax" else 0.0
            for m, b in kw:
                s[m] = s.get(m, 0) + alpha * ((b - low) / (top - low) if top > low else 1.0)
        if vec:
            top = vec[0][1]
            low = vec[-1][1] if norm in ("minmax", "max") else 0.0
            if norm == "abs":
                low = floor
            for m, c in vec:
                s[m] = s.get(m, 0) + (1 - alpha) * max(0.0, (c - low) / (top - low) if top > low else 1.0)
        return sorted(s, key=lambda m: -s[m])

    return f


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--content", default="speaker_caption")
    args = ap.parse_args()
    rows = dump(args.content)
    folds = {"A": [r for r in rows if r["conv"] <= 2], "B": [r for r in rows if r["conv"] > 2]}

    def show(name, ranker):
        a = recall_at(rows, ranker)
        print(f"{name:44s} " + " ".join(f"{x:.3f}" for x in a), flush=True)
        return a

    print(f"{len(rows)} questions; R@1 R@5 R@10 R@20")
    show("keyword", single("kw"))
    show("vector", single("vec"))
    show("rrf k=60", rrf())
    cands = {}
    for kw_w, k, depth in itertools.product((1.0, 1.5, 2.0, 3.0), (5, 10, 20, 60), (20, 50, 100)):
        cands[f"rrf w={kw_w} k={k} d={depth}"] = rrf(kw_w, 1.0, k, depth)
    for alpha, depth, norm in itertools.product((0.3, 0.4, 0.5, 0.6, 0.7), (20, 50, 100), ("max", "minmax")):
        cands[f"convex a={alpha} d={depth} {norm}"] = convex(alpha, depth, norm)
    scored = {n: {f: recall_at(rs, fn) for f, rs in folds.items()} for n, fn in cands.items()}
    for pick, check in (("A", "B"), ("B", "A")):
        best = sorted(scored, key=lambda n: -(scored[n][pick][1:3].sum()))[:5]
        print(f"best on fold {pick} (by R@5+R@10), checked on {check}:")
        for n in best:
            print(
                f"  {n:40s} {pick}: "
                + " ".join(f"{x:.3f}" for x in scored[n][pick])
                + f"   {check}: "
                + " ".join(f"{x:.3f}" for x in scored[n][check])
            )
    allsc = sorted(cands, key=lambda n: -(recall_at(rows, cands[n])[1:3].sum()))[:8]
    print("best on all:")
    for n in allsc:
        show("  " + n, cands[n])


if __name__ == "__main__":
    main()
