"""Does the top 10 depend on k? (issue #26) LoCoMo dev, hybrid: recall at 1 and 10 of the same
questions searched with k=10 and with k=200. Before the fix the candidate pool was max(100, k), so
k=200 rescaled the cosines and reordered the top 10; after it both columns must be equal.

    python bench/locomo_k.py [--conversations 0,1]      (PYTHONPATH picks the engine to measure)
"""

from __future__ import annotations

import argparse
import json

from common import CachedEmbedder, locomo_path, out_dir
from locomo import turn_content, turns

from engine import FixedClock, open_engine
from engine.config import Settings

KS = (10, 200)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", default="")
    args = ap.parse_args()
    data = json.loads(locomo_path().read_text(encoding="utf-8"))
    pick = [int(x) for x in args.conversations.split(",") if x.strip()] or list(range(len(data)))
    emb = CachedEmbedder(out_dir("locomo") / "embeddings.npz")
    found = {k: {1: 0, 10: 0} for k in KS}
    same_top10, n = 0, 0
    for idx in pick:
        conv = data[idx]
        db = out_dir("locomo_k") / f"conv{idx}.db"
        for suffix in ("", "-wal", "-shm"):
            db.with_name(db.name + suffix).unlink(missing_ok=True)
        eng = open_engine(db, embedder=emb, clock=FixedClock("2026-01-01T00:00:00Z"), settings=Settings())
        items = [
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
        ids = eng.add_memories(items, dedup=False)
        emb.save()
        by_dia = {it["metadata"]["dia_id"]: mid for it, mid in zip(items, ids, strict=True)}
        for q in conv["qa"]:
            if q.get("category") not in (1, 2, 3, 4):
                continue
            ev = {by_dia[e] for e in q.get("evidence", []) if e in by_dia}
            got = {
                k: [h.id for h in eng.search(q["question"], k=k, mode="hybrid", record_access=False).hits]
                for k in KS
            }
            n += 1
            same_top10 += got[10][:10] == got[200][:10]
            for k in KS:
                for at in (1, 10):
                    found[k][at] += bool(ev & set(got[k][:at]))
        eng.close()
        emb.save()
    print(f"questions {n}; top 10 identical at k=10 and k=200: {same_top10}/{n}")
    for k in KS:
        print(f"hybrid searched with k={k}: R@1 {found[k][1] / n:.3f}  R@10 {found[k][10] / n:.3f}")


if __name__ == "__main__":
    main()
