"""What session context two turns each way costs a hybrid search (issue #26): the same questions on
one plain-ingested LoCoMo conversation (SQLite), search.session_reach 1 and 2 interleaved question by
question so the machine's load falls on both alike; p50 / p95 of engine.search wall time (the
query's embedding cached beforehand).

    python bench/locomo_reach_cost.py [--conversation 4]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from common import CachedEmbedder, locomo_path
from locomo_plain import cache_dir, open_conv

from engine.config import SearchSettings, Settings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversation", type=int, default=4)
    args = ap.parse_args()
    conv = json.loads(locomo_path().read_text(encoding="utf-8"))[args.conversation]
    emb = CachedEmbedder(cache_dir() / "embeddings.npz")
    eng, _, _ = open_conv(args.conversation, conv, "plain", emb)
    path = eng.path
    eng.close()
    from engine import FixedClock, open_engine

    qs = [q["question"] for q in conv["qa"] if q.get("category") in (1, 2, 3, 4)]
    engines = {}
    for reach in (1, 2):
        s = Settings(search=SearchSettings(session_reach=reach))
        engines[reach] = open_engine(path, embedder=emb, clock=FixedClock(2e9), actor="bench", settings=s)
    lat: dict[int, list[float]] = {1: [], 2: []}
    for rnd in range(2):
        for i, q in enumerate(qs):
            for reach in (1, 2) if (i + rnd) % 2 == 0 else (2, 1):
                e = engines[reach]
                e.retrieval.embed_query(q)
                t0 = time.perf_counter()
                e.search(q, k=10, mode="hybrid", record_access=False)
                if rnd:  # the first round warms both
                    lat[reach].append(time.perf_counter() - t0)
    for reach, xs in lat.items():
        a = np.array(xs) * 1000
        p50, p95 = np.percentile(a, 50), np.percentile(a, 95)
        print(f"session_reach {reach}: p50 {p50:.2f} ms, p95 {p95:.2f} ms, n={len(a)}")
    for e in engines.values():
        e.close()


if __name__ == "__main__":
    main()
