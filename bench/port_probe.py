"""One side of the storage-port before/after comparison (bench/port_compare.py runs it): the same
workloads through the engine's public API only, so the same script times any checkout that is
first on PYTHONPATH. Prints one JSON object.

    PYTHONPATH=<checkout> python bench/port_probe.py --target PATH_OR_URL [--n 2000]

Workloads (a hash embedder throughout: the model's cost is the same on both sides and would hide
the storage's): ingest (one `add_memories` batch of n, then 100 `add_memory` one at a time),
hybrid search k=10 one-shot (no in-memory matrices: the store's own indexes) and long-lived (both
matrices loaded, as the console and MCP server run), a decay pass 40 days on, a curator run after
100 new memories (incremental), a forget of a 20-memory query case (execute, then verify), and on
request the console's first frame in process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine import FixedClock, HashEmbedder, open_engine
from engine.clock import DAY
from engine.config import Settings

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
_WORDS = (
    "deploy staging release pipeline review coffee tuesday budget invoice python rust latency "
    "cache index vector keyword memory agent prefers short pull requests tests flaky retry lock "
    "schema migration backup restore replica audit forget curator merge decay archive rule flow"
)
WORDS = _WORDS.split()
CANARY = "zq-canary-7731"


def text(i: int) -> str:
    w = [WORDS[(i * p) % len(WORDS)] for p in (3, 7, 11, 13, 17, 19)]
    return f"note {i}: {' '.join(w)} {i % 97}"


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def engine(target: str, clock: FixedClock, long_lived: bool | None = None) -> Any:
    s = Settings()
    if long_lived is False:
        s = replace(s, search=replace(s.search, matrix_after=0, keyword_matrix_after=0))
    eng = open_engine(target, embedder=HashEmbedder(), clock=clock, actor="bench", settings=s)
    if long_lived:
        eng.vectors.keep_in_memory()
        eng.retrieval.keyword.keep_in_memory()
    return eng


def searches(eng: Any, n: int) -> dict[str, float]:
    lat = []
    for q in range(60):
        query = f"{WORDS[q % len(WORDS)]} {WORDS[(q * 5) % len(WORDS)]} note"
        t = time.perf_counter()
        eng.search(query, k=10, mode="hybrid")
        lat.append((time.perf_counter() - t) * 1000)
    lat = lat[10:]  # the first few warm caches (and, long-lived, finish loading)
    return {"p50_ms": statistics.median(lat), "p95_ms": pct(lat, 0.95)}


def probe(target: str, n: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    clock = FixedClock(T0)
    eng = engine(target, clock)
    items = [{"content": text(i), "agent": ("atlas", "scout", "juno")[i % 3]} for i in range(n)]
    t = time.perf_counter()
    eng.add_memories(items, dedup=False)
    out["ingest_batch_per_s"] = n / (time.perf_counter() - t)
    single = []
    for i in range(100):
        t = time.perf_counter()
        eng.add_memory(f"single {i}: {text(n + i)}", dedup=False)
        single.append((time.perf_counter() - t) * 1000)
    out["ingest_single_p50_ms"] = statistics.median(single)
    eng.close()

    eng = engine(target, clock, long_lived=False)
    out["search_oneshot"] = searches(eng, n)
    eng.close()
    eng = engine(target, clock, long_lived=True)
    out["search_longlived"] = searches(eng, n)
    eng.close()

    eng = engine(target, clock)
    t = time.perf_counter()
    eng.curator.run(use_model=False)
    out["curator_full_s"] = time.perf_counter() - t
    clock.advance(3600)
    eng.add_memories([{"content": f"fresh {i}: {text(i)}"} for i in range(100)], dedup=False)
    clock.advance(60)
    t = time.perf_counter()
    eng.curator.run(use_model=False)
    out["curator_incremental_s"] = time.perf_counter() - t

    t = time.perf_counter()
    eng.decay.run(now=T0 + 40 * DAY)
    out["decay_pass_s"] = time.perf_counter() - t

    for i in range(20):
        eng.add_memory(f"Note {i}: the staging password {CANARY} rotates on day {i}", dedup=False)
    pv = eng.forget.run("query", CANARY, "bench", preview=True)
    t = time.perf_counter()
    eng.forget.execute(pv.request.id, verify=False)
    out["forget_execute_s"] = time.perf_counter() - t
    t = time.perf_counter()
    eng.forget.verify(pv.request.id)
    out["forget_verify_s"] = time.perf_counter() - t
    eng.close()
    return out


async def first_frame(target: str) -> float:
    from console.app import MemConsole

    frame: dict[str, float] = {}

    class Timed(MemConsole):
        def _after_first_frame(self) -> None:
            frame.setdefault("t", time.perf_counter() - t0)
            super()._after_first_frame()

    t0 = time.perf_counter()
    app = Timed(db_path=target, actor="bench", poll_interval=None, start_embedder=False)
    async with app.run_test(size=(160, 45)) as pilot:
        while "t" not in frame and time.perf_counter() - t0 < 60:
            await pilot.pause(0.01)
    return frame.get("t", float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", required=True)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--frame", help="also time the console's first frame on this database")
    args = ap.parse_args()
    res = probe(args.target, args.n)
    if args.frame:
        res["first_frame_s"] = asyncio.run(first_frame(args.frame))
    import engine as eng_pkg

    res["engine"] = str(Path(eng_pkg.__file__).resolve().parent)
    json.dump(res, sys.stdout)


if __name__ == "__main__":
    main()
