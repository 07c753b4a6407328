"""Round trips to PostgreSQL per agent call (issue #24): every statement the engine sends during
one `remember` (add_memory, dedup on) and one `recall` (search recording access, as MCP `recall`
does), counted on psycopg's cursor (so also what the store sends outside PgConnection.execute:
BEGIN, COMMIT, snapshots) and grouped by statement text; on a store of --n memories (hash embedder).

    python bench/pg_trips.py [--n 2000] [--calls 20] [--top 25]
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import threading
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
    poller threads), plus commit/rollback calls, by statement text."""
    me = threading.get_ident()
    seen: collections.Counter[str] = collections.Counter()
    cur_exec, cur_many = psycopg.Cursor.execute, psycopg.Cursor.executemany
    commit, rollback = psycopg.Connection.commit, psycopg.Connection.rollback

    def execute(self: Any, query: Any, *a: Any, **k: Any) -> Any:
        if threading.get_ident() == me:
            seen[_key(query)] += 1
            if WHERE and WHERE in _key(query):  # --where: who sends it (the engine's frames)
                frames = [f for f in traceback.format_stack(limit=20)[:-1] if "/engine/" in f]
                print("----", _key(query)[:80], "\n" + "".join(frames))
        return cur_exec(self, query, *a, **k)

    def executemany(self: Any, query: Any, *a: Any, **k: Any) -> Any:
        if threading.get_ident() == me:
            seen["(many) " + _key(query)] += 1
        return cur_many(self, query, *a, **k)

    def wrap(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: Any) -> Any:
            if (
                threading.get_ident() == me
                and self.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
            ):
                seen[name] += 1
            return real(self)

        return call

    psycopg.Cursor.execute, psycopg.Cursor.executemany = execute, executemany  # type: ignore[method-assign]
    psycopg.Connection.commit = wrap("COMMIT (conn.commit)", commit)  # type: ignore[method-assign]
    psycopg.Connection.rollback = wrap("ROLLBACK (conn.rollback)", rollback)  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        psycopg.Cursor.execute, psycopg.Cursor.executemany = cur_exec, cur_many  # type: ignore[method-assign]
        psycopg.Connection.commit, psycopg.Connection.rollback = commit, rollback  # type: ignore[method-assign]


def measure(eng: Any, calls: int) -> dict[str, Any]:
    """Per call: the median total, and the statements summed over all calls."""
    out: dict[str, Any] = {}
    corpus = SyntheticCorpus()
    ops: dict[str, Callable[[int], Any]] = {
        "recall": lambda i: eng.search(QUERIES[i % len(QUERIES)], k=5, agent="agent-01" if i % 2 else None),
        "recall_mcp": lambda i: eng.search(QUERIES[i % len(QUERIES)], k=10, door="mcp", for_agent="coder"),
        "remember": lambda i: eng.add_memory(
            corpus.items(10**6 + i, 1)[0]["content"], agent="agent-01", dedup=True
        ),
    }
    for name, op in ops.items():
        op(0)  # warm: first-use reads (settings, catalogue) are not the steady state
        totals: list[int] = []
        summed: collections.Counter[str] = collections.Counter()
        for i in range(1, calls + 1):
            with counting() as seen:
                op(i)
            totals.append(sum(seen.values()))
            summed.update(seen)
        out[name] = {"median": statistics.median(totals), "max": max(totals), "by_statement": summed}
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--where", default="", help="print the engine frames sending statements containing this")
    args = ap.parse_args()
    global WHERE
    WHERE = args.where
    from pg_parity import pg_server

    with pg_server() as fresh:
        url = fresh("pg_trips")
        eng = open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="bench")
        eng.add_memories(SyntheticCorpus().items(0, args.n), dedup=False)
        res = measure(eng, args.calls)
        eng.close()
    for name, r in res.items():
        print(
            f"\n== {name}: median {r['median']} statements per call (max {r['max']}) over {args.calls} calls"
        )
        for text, count in r["by_statement"].most_common(args.top):
            print(f"{count / args.calls:7.2f}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
