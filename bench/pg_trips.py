"""Round trips to PostgreSQL per agent call (issue #24): every statement the engine sends during
one `remember` (add_memory, dedup on) and one `recall` (search recording access, as MCP `recall`
does), counted on psycopg's cursor (so also what the store sends outside PgConnection.execute:
BEGIN, COMMIT, snapshots) and grouped by statement text; on a store of --n memories (hash
embedder). Then CPU per call over --cpu-calls more calls, not counted: this process's
(`time.process_time`, every thread: the agent's side) and the server's (utime + stime in
/proc/<pid>/stat of every backend on the bench's database: the server runs on this machine; the
shipped PostgreSQL has no pg_stat_statements). Anchors and the key go to a throwaway state dir,
and an after-commit hook's error fails the run (a failing anchor reads less than a working one).

    python bench/pg_trips.py [--n 2000] [--calls 20] [--cpu-calls 300] [--top 25] [--fleet]
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from build_direct import T0
from common import SyntheticCorpus

from engine import FixedClock, HashEmbedder, open_engine

WHERE = ""
QUERIES = ["deploy pipeline", "billing invoice", "review the api", "ops incident", "support ticket"]


def _key(sql: Any) -> str:
    text = sql if isinstance(sql, str) else sql.as_string(None) if hasattr(sql, "as_string") else repr(sql)
    if isinstance(text, bytes):
        text = text.decode()
    return " ".join(str(text).split())[:110]


@contextmanager
def counting() -> Iterator[collections.Counter[str]]:
    """Every statement a psycopg cursor sends from this thread (not the store's listener or
    poller threads), plus commit/rollback calls, by statement text. `seen.trips`: the round trips
    they took (statements sent in one psycopg pipeline share one)."""
    me = threading.get_ident()
    seen: Any = collections.Counter()
    seen.trips = 0
    cur_exec, cur_many = psycopg.Cursor.execute, psycopg.Cursor.executemany
    commit, rollback = psycopg.Connection.commit, psycopg.Connection.rollback
    real_pipeline = psycopg.Connection.pipeline

    def execute(self: Any, query: Any, *a: Any, **k: Any) -> Any:
        if threading.get_ident() == me:
            seen[_key(query)] += 1
            if getattr(self.connection, "_pipeline", None) is None:
                seen.trips += 1
            if WHERE and WHERE in _key(query):  # --where: who sends it (the engine's frames)
                frames = [f for f in traceback.format_stack(limit=20)[:-1] if "/engine/" in f]
                print("----", _key(query)[:80], "\n" + "".join(frames))
        return cur_exec(self, query, *a, **k)

    def executemany(self: Any, query: Any, *a: Any, **k: Any) -> Any:
        if threading.get_ident() == me:
            seen["(many) " + _key(query)] += 1
            seen.trips += 1
        return cur_many(self, query, *a, **k)

    def wrap(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: Any) -> Any:
            if (
                threading.get_ident() == me
                and self.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
            ):
                seen[name] += 1
                seen.trips += 1
            return real(self)

        return call

    @contextmanager
    def pipeline(self: Any) -> Iterator[Any]:
        with real_pipeline(self) as p:
            yield p
        if threading.get_ident() == me:
            seen.trips += 1  # what was sent in it: one round trip

    psycopg.Cursor.execute, psycopg.Cursor.executemany = execute, executemany  # type: ignore[method-assign]
    psycopg.Connection.pipeline = pipeline  # type: ignore[method-assign,assignment]
    psycopg.Connection.commit = wrap("COMMIT (conn.commit)", commit)  # type: ignore[method-assign]
    psycopg.Connection.rollback = wrap("ROLLBACK (conn.rollback)", rollback)  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        psycopg.Cursor.execute, psycopg.Cursor.executemany = cur_exec, cur_many  # type: ignore[method-assign]
        psycopg.Connection.commit, psycopg.Connection.rollback = commit, rollback  # type: ignore[method-assign]
        psycopg.Connection.pipeline = real_pipeline  # type: ignore[method-assign]


TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def server_cpu_ms(url: str) -> float:
    """CPU the server's backends on the bench's database used so far (ms), from /proc."""
    with psycopg.connect(url, autocommit=True) as c:
        pids = [
            r[0]
            for r in c.execute(
                "SELECT pid FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ]
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of stat)
    return total * TICK_MS


def by_another_agent(other: Any, i: int) -> None:
    """Another agent's remember (its own engine and connections), in another thread: counting()
    sees only this thread, so a fleet recall's statements are counted without the write's."""
    t = threading.Thread(
        target=other.add_memory, args=(f"fleet note {i}: deploy pipeline ticket",), kwargs={"dedup": False}
    )
    t.start()
    t.join()


def ops_of(eng: Any, other: Any = None) -> dict[str, Callable[[int], Any]]:
    corpus = SyntheticCorpus()
    fleet: dict[str, Callable[[int], Any]] = {}
    if other is not None:  # a recall in a fleet: the matrices catch up with another agent's write first
        fleet["recall_fleet"] = lambda i: (
            by_another_agent(other, i),
            eng.search(QUERIES[i % len(QUERIES)], k=10, door="mcp", for_agent="coder"),
        )
        # the other agent's write alone: recall_fleet's CPU minus this one is the recall's own
        fleet["other_write"] = lambda i: by_another_agent(other, i)
    return {
        **fleet,
        "recall": lambda i: eng.search(QUERIES[i % len(QUERIES)], k=5, agent="agent-01" if i % 2 else None),
        "recall_mcp": lambda i: eng.search(QUERIES[i % len(QUERIES)], k=10, door="mcp", for_agent="coder"),
        "remember": lambda i: eng.add_memory(
            corpus.items(10**6 + i, 1)[0]["content"], agent="agent-01", dedup=True
        ),
    }


def cpu(eng: Any, url: str, calls: int, other: Any = None) -> dict[str, tuple[float, float, float]]:
    """Per call: (wall ms, this process's CPU ms, the server backends' CPU ms), not counted
    (recall_fleet's include the other agent's write: both processes are this one)."""
    out: dict[str, tuple[float, float, float]] = {}
    for name, op in ops_of(eng, other).items():
        base = 10**5 * (1 + len(out))  # fresh contents: a remember is never a duplicate
        op(base)
        s0, c0, w0 = server_cpu_ms(url), time.process_time(), time.perf_counter()
        for i in range(1, calls + 1):
            op(base + i)
        w1, c1 = time.perf_counter(), time.process_time()
        s1 = server_cpu_ms(url)
        out[name] = ((w1 - w0) * 1000 / calls, (c1 - c0) * 1000 / calls, (s1 - s0) / calls)
    return out


def measure(eng: Any, calls: int, other: Any = None) -> dict[str, Any]:
    """Per call: the median total, and the statements summed over all calls."""
    out: dict[str, Any] = {}
    for name, op in ops_of(eng, other).items():
        op(0)  # warm: first-use reads (settings, catalogue) are not the steady state
        totals: list[int] = []
        trips: list[int] = []
        summed: collections.Counter[str] = collections.Counter()
        for i in range(1, calls + 1):
            with counting() as seen:
                op(i)
            totals.append(sum(seen.values()))
            trips.append(seen.trips)
            summed.update(seen)
        out[name] = {
            "median": statistics.median(totals),
            "max": max(totals),
            "trips": statistics.median(trips),
            "by_statement": summed,
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--cpu-calls", type=int, default=300)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument(
        "--fleet", action="store_true", help="also recall_fleet: a recall after another agent's remember"
    )
    ap.add_argument("--where", default="", help="print the engine frames sending statements containing this")
    args = ap.parse_args()
    global WHERE
    WHERE = args.where
    from pg_parity import pg_server

    os.environ["MEMCONSOLE_STATE"] = tempfile.mkdtemp(prefix="pg_trips_state_")
    with pg_server() as fresh:
        url = fresh("pg_trips")
        eng = open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="bench")
        eng.add_memories(SyntheticCorpus().items(0, args.n), dedup=False)
        other = None
        if args.fleet:
            other = open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="bench-other")
            eng.vectors.keep_in_memory()
            eng.retrieval.keyword.keep_in_memory()
        res = measure(eng, args.calls, other)
        used = cpu(eng, url, args.cpu_calls, other)
        errors = list(eng.store.hook_errors)
        eng.close()
        if other is not None:
            errors += other.store.hook_errors
            other.close()
    if errors:
        print(f"after-commit hooks failed {len(errors)} times; first: {errors[0]}")
        return 1
    for name, r in res.items():
        print(
            f"\n== {name}: median {r['median']} statements per call (max {r['max']}),"
            f" {r['trips']} round trips, over {args.calls} calls"
        )
        for text, count in r["by_statement"].most_common(args.top):
            print(f"{count / args.calls:7.2f}  {text}")
    print(f"\n== per call over {args.cpu_calls} calls (not counted): wall ms, agent CPU ms, server CPU ms")
    for name, (wall, client, server) in used.items():
        print(f"{name:11} {wall:7.2f} {client:7.2f} {server:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
