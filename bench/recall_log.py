"""The recall log's cost (issue #26): per recall on SQLite (p50 of the log statement itself and
of a whole agent recall with the log on vs off, interleaved), the statements (round trips) a
recall sends to PostgreSQL with the log on vs off, and replaying a logged recall at 100,000
memories (bench/build_direct.py's file; `recalls.replay` = the search again + the diff's reads).

    python bench/recall_log.py [--n 2000] [--recalls 300] [--write]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from build_direct import T0, build_direct
from common import SyntheticCorpus, machine, out_dir, pct, write_section

from engine import FixedClock, HashEmbedder, open_engine
from engine.config import RecallsSettings
from engine.recalls import log as recall_log

QUERIES = ["deploy pipeline", "billing invoice", "review the api", "ops incident", "support ticket"]


def seed(eng, n: int) -> None:
    corpus = SyntheticCorpus()
    eng.add_memories(corpus.items(0, n), dedup=False)


def timed_record_in() -> list[float]:
    """Wrap the log's hook to time the statement it adds inside the access write."""
    took: list[float] = []
    real = recall_log.record_in

    def timed(*a, **k):
        t0 = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            took.append(time.perf_counter() - t0)

    recall_log.record_in = timed  # type: ignore[assignment]
    return took


def sqlite_costs(n: int, recalls: int) -> dict:
    d = Path(tempfile.mkdtemp(prefix="recall-log-bench-"))
    eng = open_engine(d / "m.db", embedder=HashEmbedder(), clock=FixedClock(T0), actor="bench")
    seed(eng, n)
    on, off = eng.settings, replace(eng.settings, recalls=RecallsSettings(log=False))
    took = timed_record_in()
    t_on, t_off = [], []
    for i in range(recalls):  # interleaved: the machine's load hits both alike
        q = QUERIES[i % len(QUERIES)]
        for settings, out in ((on, t_on), (off, t_off)) if i % 2 else ((off, t_off), (on, t_on)):
            eng.settings = settings
            t0 = time.perf_counter()
            eng.search(q, k=10, door="mcp", for_agent="coder")
            out.append(time.perf_counter() - t0)
    eng.settings = on
    rows = eng.recalls.count()
    eng.close()
    return {"record_in": took, "on": t_on, "off": t_off, "rows": rows}


def pg_round_trips(n: int) -> dict:
    from pg_parity import pg_server

    from engine.storage.postgres.connection import PgConnection

    calls = {"n": 0}
    real_exec, real_many = PgConnection.execute, PgConnection.executemany

    def count_exec(self, *a, **k):
        calls["n"] += 1
        return real_exec(self, *a, **k)

    def count_many(self, *a, **k):
        calls["n"] += 1
        return real_many(self, *a, **k)

    out: dict = {}
    with pg_server() as fresh:
        url = fresh("recall_log")
        eng = open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="bench")
        seed(eng, n)
        PgConnection.execute, PgConnection.executemany = count_exec, count_many  # type: ignore[method-assign]
        try:
            base = eng.settings
            for label, log in (("off", False), ("on", True)):
                settings = replace(base, recalls=RecallsSettings(log=log))
                eng.settings = settings
                per = []
                for q in QUERIES * 4:
                    calls["n"] = 0
                    eng.search(q, k=10, door="mcp", for_agent="coder")
                    per.append(calls["n"])
                out[label] = statistics.median(per)
            took = timed_record_in()
            for q in QUERIES * 20:
                eng.search(q, k=10, door="mcp", for_agent="coder")
            out["record_in"] = took
        finally:
            PgConnection.execute, PgConnection.executemany = real_exec, real_many  # type: ignore[method-assign]
        eng.close()
    return out


def replay_at(n: int, times: int = 20) -> list[float]:
    path = out_dir("latency") / f"mem{n}.db"
    if not path.exists():
        build_direct(path, n)
    eng = open_engine(path, embedder=HashEmbedder(), clock=FixedClock(T0), actor="bench")
    for q in QUERIES:
        eng.search(q, k=10, door="mcp", for_agent="coder")
    ids = [r.id for r in eng.recalls.list(limit=len(QUERIES))]
    took = []
    for i in range(times):
        t0 = time.perf_counter()
        eng.recalls.replay(ids[i % len(ids)])
        took.append(time.perf_counter() - t0)
    eng.close()
    return took


def ms(xs: list[float], q: float = 50) -> str:
    return f"{pct(xs, q) * 1000:.2f}"


def row(what: str, xs: list[float]) -> str:
    return f"| {what} | {ms(xs)} ms | {ms(xs, 95)} ms |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--recalls", type=int, default=300)
    ap.add_argument("--replay-n", type=int, default=100_000)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    lite = sqlite_costs(args.n, args.recalls)
    pg = pg_round_trips(args.n)
    rep = replay_at(args.replay_n)
    diff = pct(lite["on"], 50) - pct(lite["off"], 50)
    body = f"""## Recall log: cost per recall, round trips, replay (`bench/recall_log.py`)

{machine()}. An agent's recall (`search(door="mcp")`, HashEmbedder, hybrid, k 10) on {args.n:,}
memories; {args.recalls} recalls each with the log on and off, interleaved.

| what | p50 | p95 |
|---|---|---|
{row("SQLite: the log's statement inside the access write (`record_in`)", lite["record_in"])}
{row("SQLite: whole recall, log on", lite["on"])}
{row("SQLite: whole recall, log off", lite["off"])}
| SQLite: on − off (p50) | {diff * 1000:.2f} ms | |
{row("PostgreSQL: the log's statement (`record_in`, INSERT … RETURNING id)", pg["record_in"])}
{row(f"replay of a logged recall at {args.replay_n:,} memories (SQLite, no matrix)", rep)}

PostgreSQL statements (= round trips; none pipelined) per recall, median: log off {pg["off"]:g},
log on {pg["on"]:g} — the log adds {pg["on"] - pg["off"]:g}, inside the same transaction as the
access recording (no transaction of its own). Goals (issue #26): ≤ 1 ms p50 on SQLite, ≤ 1 extra
round trip on PostgreSQL, replay ≤ 100 ms at 100k.
"""
    print(body)
    if args.write:
        write_section("recall_log", body)


if __name__ == "__main__":
    main()
