"""A long-lived engine's keyword overlay under a burst from another process (issue 22): N memories
of S kB written by a child process while this one searches in a loop. Reports each search's latency
while the burst lands and the process's RSS growth, with the overlay's bounds (the default) and, for
scale, without them (a smaller burst: tokenizing it all in the searcher's thread is the cost).

    .venv/bin/python bench/keyword_overlay_burst.py [--n 2000] [--kb 20] [--base 5000]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT

from engine import open_engine
from engine.retrieval import keyword_matrix
from engine.retrieval.filters import Filters
from engine.retrieval.query import plan

WRITER = """
import random, sys
from engine import open_engine
db, n, kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(5)
letters = "abcdefghijklmnopqrstuvwxyz"
words = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(30000)]
with open_engine(db, embedder=None) as eng:
    for start in range(0, n, 50):
        items = []
        for i in range(start, min(n, start + 50)):
            text, size = [], 0
            while size < kb * 1000:
                w = rng.choice(words); text.append(w); size += len(w) + 1
            items.append({"content": " ".join(text) + f" burst{i}"})
        eng.memories.add_many_ex(items, dedup=False)
"""


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run(n: int, kb: int, base: int, bounded: bool) -> dict:
    d = Path(tempfile.mkdtemp(prefix="mc-burst-"))
    db = d / "m.db"
    rng = random.Random(1)
    vocab = ["deploy", "server", "ledger", "invoice", "coffee", "garden", "budget", "meeting", "backup"]
    with open_engine(db, embedder=None) as eng:
        eng.memories.add_many_ex(
            [{"content": " ".join(rng.choice(vocab) for _ in range(12))} for _ in range(base)], dedup=False
        )
    if not bounded:
        keyword_matrix.SYNC_MAX_CHARS = keyword_matrix.OVERLAY_MAX_CHARS = 10**12
        keyword_matrix.RELOAD_FROM = 10**9
    eng = open_engine(db, embedder=None)
    kr = eng.retrieval.keyword
    kr.keep_in_memory()
    before = rss_mb()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(n), str(kb)], cwd=ROOT)
    lat: list[float] = []
    while writer.poll() is None:
        t = time.perf_counter()
        kr.ranks(plan("deploy ledger burst7"), Filters(), 10)
        lat.append(time.perf_counter() - t)
        time.sleep(0.05)
    t = time.perf_counter()
    kr.ranks(plan("deploy ledger burst7"), Filters(), 10)  # the sync after the last write
    lat.append(time.perf_counter() - t)
    t = time.perf_counter()
    while kr.loader.loading:
        time.sleep(0.05)
    if kr.matrix is None:  # a load that failed mid-burst: a search's next trigger retries it
        kr.keep_in_memory()
    folded = time.perf_counter() - t
    hits = kr.ranks(plan(f"burst{n - 1}"), Filters(), 10)
    out = {
        "bounded": bounded,
        "memories": n,
        "kB each": kb,
        "searches": len(lat),
        "p50 ms": round(1000 * sorted(lat)[len(lat) // 2], 1),
        "max ms": round(1000 * max(lat), 1),
        "rss growth MB": round(rss_mb() - before, 1),
        "folded in after s": round(folded, 1),
        "overlay chars": kr.matrix.extra_chars if kr.matrix else None,
        "last memory found": bool(hits),
    }
    eng.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--kb", type=int, default=20)
    ap.add_argument("--base", type=int, default=5000)
    ap.add_argument("--unbounded-n", type=int, default=200)
    a = ap.parse_args()
    print(run(a.n, a.kb, a.base, bounded=True), flush=True)
    if a.unbounded_n:
        print(run(a.unbounded_n, a.kb, a.base, bounded=False), flush=True)


if __name__ == "__main__":
    main()
