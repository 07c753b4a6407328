"""The console's first frame on a 100,000-memory database.

    python bench/console_first_frame.py [--db bench/out/latency/mem100000.db] [--runs 5]

Measured two ways:
- in process (headless driver): from constructing the App (which opens the engine with
  load="lazy") to the callback after its first refresh, and on to the Sessions list and the
  header counts being filled by their workers; checks that sentence-transformers is not imported
  by then. Compared with the plain approach in the same run: every pane composed before the first
  frame (no Lazy), and loading the model before the first frame (load="now").
- in a real terminal (tmux 160×45): from starting `memconsole` to the tab labels on screen,
  including the interpreter and imports.

The 100k database is the one bench/search_latency.py builds (run it first if it is missing).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import machine, write_section  # noqa: E402

from console.app import MemConsole  # noqa: E402


class Timed(MemConsole):
    def __init__(self, t0: float, **kw) -> None:
        self.t0 = t0
        self.marks: dict[str, float] = {}
        super().__init__(**kw)
        self.marks["engine open"] = time.perf_counter() - t0

    def _after_first_frame(self) -> None:
        self.marks["first frame"] = time.perf_counter() - self.t0
        self.marks["st imported"] = float("sentence_transformers" in sys.modules)
        super()._after_first_frame()


async def one_run(db: Path, lazy: bool, load: str = "lazy") -> dict[str, float]:
    Timed.LAZY_PANES = lazy
    t0 = time.perf_counter()
    if load == "now":
        from engine import open_engine

        eng = open_engine(db, embedder="default", load="now", actor="bench")
        app = Timed(t0, engine=eng, poll_interval=None, start_embedder=False)
    else:
        app = Timed(t0, db_path=str(db), actor="bench", poll_interval=None, start_embedder=False)
    async with app.run_test(size=(160, 45)) as pilot:
        # the 100k file holds memories only (no sessions): wait for the list's worker and the counts
        while "counting" in str(app.query_one("#status").render()) or any(
            w.group.startswith("sessions.") and not w.is_finished for w in app.workers
        ):
            await pilot.pause(0.01)
            if time.perf_counter() - t0 > 120:
                break
        app.marks["sessions + counts shown"] = time.perf_counter() - t0
    if load == "now":
        app.engine.close()
    return app.marks


def tmux_run(db: Path) -> float:
    name = "ffbench"
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    t0 = time.perf_counter()
    subprocess.run(
        [
            "tmux",
            "new",
            "-d",
            "-s",
            name,
            "-x",
            "160",
            "-y",
            "45",
            f"{ROOT}/.venv/bin/memconsole --db {db} --actor bench; sleep 30",
        ],
        check=True,
    )
    took = float("nan")
    while time.perf_counter() - t0 < 30:
        out = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True
        ).stdout
        if "7 Forget & Audit" in out:
            took = time.perf_counter() - t0
            break
        time.sleep(0.02)
    subprocess.run(["tmux", "send-keys", "-t", name, "q"], capture_output=True)
    time.sleep(1.0)
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    return took


def import_time() -> float:
    """Wall time of a fresh interpreter importing what `memconsole` imports before its frame."""
    t0 = time.perf_counter()
    subprocess.run(
        [f"{ROOT}/.venv/bin/python", "-c", "import console.cli, console.app"], check=True, cwd=ROOT
    )
    return time.perf_counter() - t0


def med(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=str(ROOT / "bench/out/latency/mem100000.db"))
    ap.add_argument("--small", default=None, help="also time a small database (e.g. the demo)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--model", action="store_true", help="also time load='now' (model first)")
    args = ap.parse_args()
    src = Path(args.db)
    if not src.exists():
        sys.exit(f"{src} is missing: run bench/search_latency.py first")
    work = ROOT / "bench/out/first_frame.db"
    if not work.exists():
        shutil.copy(src, work)  # the console may reconcile the schema: work on a copy
    from engine import open_engine

    with open_engine(work, embedder=None) as e:
        n = sum(e.counts().memories_by_tier.values())
    lazy = [asyncio.run(one_run(work, True)) for _ in range(args.runs)]
    eager = [asyncio.run(one_run(work, False)) for _ in range(args.runs)]
    model = [asyncio.run(one_run(work, False, "now"))] if args.model else []
    term = [tmux_run(work) for _ in range(args.runs)]
    imports = [import_time() for _ in range(args.runs)]
    print("lazy", lazy, "\neager", eager, "\nmodel", model, "\ntmux", term)
    assert all(r["st imported"] == 0.0 for r in lazy), "sentence-transformers imported before the first frame"
    rows = [
        ("console (panes 2–7 lazy, model after the frame)", lazy),
        ("plain: every pane composed before the first frame", eager),
    ]
    if model:
        rows.append(("plain: model loaded before the first frame", model))
    body = [
        "## Console first frame (`bench/console_first_frame.py`)",
        "",
        f"Machine: {machine()}.",
        f"Database: {n:,} memories (bench/search_latency.py's 100k file). Median of {args.runs} "
        f"runs in process (headless driver, 160×45); the real model loads after the frame and "
        f"was not started here.",
        "",
        "| variant | engine open | first frame | sessions + header counts shown |",
        "|---|---:|---:|---:|",
    ]
    for label, runs in rows:
        body.append(
            f"| {label} | {med(runs, 'engine open'):.3f} s | {med(runs, 'first frame'):.3f} s"
            f" | {med(runs, 'sessions + counts shown'):.3f} s |"
        )
    body += [
        "",
        f"In a real terminal (tmux 160×45), from starting `memconsole` (interpreter and "
        f"imports included) to the tab labels on screen: median "
        f"{statistics.median(term):.2f} s (runs: {', '.join(f'{t:.2f}' for t in term)}).",
        f"Of that, a fresh interpreter importing `console.cli` and `console.app` (engine with "
        f"numpy, sqlean and sqlite-vec; textual; the CLI verb modules) takes a median "
        f"{statistics.median(imports):.2f} s: imports, not the console's own work, are most "
        f"of the end-to-end time on this shared machine.",
        "sentence-transformers was not imported before the first frame in any run.",
        f"Ratio: the lazy first frame takes {med(lazy, 'first frame') / med(eager, 'first frame'):.2f}× "
        f"the eager one"
        + (
            f" and {med(lazy, 'first frame') / med(model, 'first frame'):.3f}× the model-first one."
            if model
            else "."
        ),
    ]
    write_section("console_first_frame", "\n".join(body))
    print("\n".join(body))


if __name__ == "__main__":
    main()
