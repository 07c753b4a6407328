"""LoCoMo on a plain ingest: ranking that does not depend on benchmark-only metadata (issue #26).

Each dev conversation goes into a fresh database twice, through the engine API:
- "plain": as a chat log would arrive — content "Speaker: text", created_at = the message time (the
  session's date and time, plus 30 s per turn: LoCoMo dates sessions, not turns), session_id = the
  chat session, NO metadata at all;
- "metadata": the bench's old ingest — the same content with metadata speaker / date / dia_id /
  session, written "now".
Evidence turns are found by the ids add_memories returns, never through stored metadata.

Every retriever's top 200 per question is dumped once through the engine (its keyword plan and
ranks, its vector KNN), with each memory's speaker / date / time expression as the engine derives
them (engine/retrieval/fusion.said); fusion variants are then scored offline (mirroring
engine/retrieval/fusion.py and search.py) and chosen leave-one-conversation-out: for each dev
conversation, the settings are chosen on the other four by the mean of R@1, R@5, R@10 over a grid
point and its one-step neighbours (a flat region, not a peak), and scored on it. Last, the engine
itself answers every question at its defaults (end to end, state weighting included).

    python bench/locomo_plain.py [--write] [--engine-only]

Embeddings are cached on disk (MEMCONSOLE_BENCH_CACHE, default bench/out/locomo); so are the dumps.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from common import CachedEmbedder, locomo_path, machine, out_dir, write_section
from locomo import question_candidates, turn_content, turns
from locomo_plain_fusion import Variant, describe, fmt, loo, prepare, recall

from engine import FixedClock, open_engine
from engine.config import SearchSettings, Settings
from engine.types import load_json

DEPTH = 200
KS = (1, 5, 10, 20)
INGESTS = ("plain", "metadata")


def cache_dir() -> Path:
    p = Path(os.environ.get("MEMCONSOLE_BENCH_CACHE") or out_dir("locomo"))
    p.mkdir(parents=True, exist_ok=True)
    return p


_SESSION_TIME = re.compile(r"(\d{1,2}):(\d\d)\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.IGNORECASE)


def session_time(text: str) -> float:
    """'1:56 pm on 8 May, 2023' -> epoch seconds (UTC)."""
    m = _SESSION_TIME.search(text)
    if m is None:
        raise SystemExit(f"unreadable LoCoMo session date: {text!r}")
    hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "pm" else 0)
    month = datetime.strptime(m.group(5)[:3], "%b").month
    return datetime(int(m.group(6)), month, int(m.group(4)), hour, int(m.group(2)), tzinfo=UTC).timestamp()


def items_for(conv: dict, ingest: str) -> list[dict]:
    out, last_session, i = [], None, 0
    for s, d, t in turns(conv):
        i = 0 if s != last_session else i + 1
        last_session = s
        item: dict = {"content": turn_content(t, "speaker"), "session_id": f"s{s}"}
        if ingest == "plain":
            item["created_at"] = session_time(d) + 30 * i
        else:
            item["metadata"] = {"dia_id": t["dia_id"], "session": s, "date": d, "speaker": t["speaker"]}
        out.append(item)
    return out


def open_conv(i: int, conv: dict, ingest: str, emb: CachedEmbedder, search: SearchSettings | None = None):
    """A fresh database holding one conversation; (engine, items, ids). The plain ingest's clock
    is a day after its last message (a log read back soon after); the metadata one's is fixed."""
    db = cache_dir() / f"plain_{ingest}{i}{os.environ.get('LOCOMO_PLAIN_TAG', '')}.db"
    for s in ("", "-wal", "-shm"):
        Path(str(db) + s).unlink(missing_ok=True)
    items = items_for(conv, ingest)
    now = max(it["created_at"] for it in items) + 86400 if ingest == "plain" else "2026-01-01T00:00:00Z"
    settings = Settings(search=search) if search is not None else None
    eng = open_engine(db, embedder=emb, clock=FixedClock(now), actor="bench", settings=settings)
    ids = eng.add_memories(items, dedup=False)
    return eng, items, ids


def dump(data: list[dict], ingest: str, emb: CachedEmbedder) -> list[dict]:
    from engine.retrieval import derived, fusion  # (imported here: --engine-only runs the code before too)

    digest = hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]
    code = hashlib.sha1(
        b"".join(Path(m.__file__).read_bytes() for m in (derived, fusion) if m.__file__)
    ).hexdigest()[:8]
    path = cache_dir() / f"plain_dump_{ingest}_{digest}_{code}.json"
    if path.exists():
        return json.loads(path.read_text())
    convs = []
    for i, conv in enumerate(data):
        eng, items, ids = open_conv(i, conv, ingest, emb)
        dia = [t["dia_id"] for _, _, t in turns(conv)]
        by_dia = dict(zip(dia, ids, strict=True))
        everything = fusion.Named("?", 1, 1, 1, True)  # derive every field
        mems = []
        for it, m in zip(items, ids, strict=True):
            mem = eng.memories.get(m)
            md = load_json(mem.metadata) if isinstance(mem.metadata, str) else (mem.metadata or {})
            sd = fusion.said(md, mem.content, mem.created_at, everything)
            mems.append(
                {
                    "id": m,
                    "session": it["session_id"],
                    "speaker": sd.speaker,
                    "month": sd.month,
                    "year": sd.year,
                    "day": sd.day,
                    "timed": sd.timed,
                }
            )
        qs = question_candidates(eng, conv, by_dia, DEPTH)
        emb.save()
        eng.close()
        convs.append({"conv": i, "mems": mems, "qs": qs})
        print(f"dumped {ingest} conversation {i}: {len(mems)} turns, {len(qs)} questions", flush=True)
    path.write_text(json.dumps(convs))
    return convs


# -- the engine, end to end ------------------------------------------------------------------------


def engine_run(data: list[dict], ingest: str, emb: CachedEmbedder, search: SearchSettings | None) -> dict:
    """Per mode: per-conversation R@k through engine.search (k=20, record_access=False)."""
    per: dict[str, list[np.ndarray]] = {"keyword": [], "vector": [], "hybrid": []}
    lat: list[float] = []
    for i, conv in enumerate(data):
        eng, _, ids = open_conv(i, conv, ingest, emb, search)
        by_dia = dict(zip([t["dia_id"] for _, _, t in turns(conv)], ids, strict=True))
        rows = {m: [] for m in per}
        for q in conv["qa"]:
            if q.get("category") not in (1, 2, 3, 4):
                continue
            ev = {by_dia[e] for e in q["evidence"] if e in by_dia}
            eng.retrieval.embed_query(q["question"])
            for mode in per:
                t0 = time.perf_counter()
                got = [h.id for h in eng.search(q["question"], k=20, mode=mode, record_access=False).hits]
                if mode == "hybrid":
                    lat.append(time.perf_counter() - t0)
                rows[mode].append([bool(ev.intersection(got[:k])) for k in KS])
        eng.close()
        emb.save()
        for mode in per:
            per[mode].append(np.array(rows[mode], float).mean(axis=0))
    return {"per": per, "n": [len([q for q in c["qa"] if q.get("category") in (1, 2, 3, 4)]) for c in data],
            "p50_ms": float(np.median(lat)) * 1000}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write the tables to BENCHMARKS.md")
    ap.add_argument("--engine-only", action="store_true", help="only the engine end to end (before/after)")
    ap.add_argument("--offline-only", action="store_true", help="only the offline leave-one-out")
    ap.add_argument("--ingest", choices=INGESTS, help="one ingest only (default: both)")
    args = ap.parse_args()
    ingests = (args.ingest,) if args.ingest else INGESTS
    data = json.loads(locomo_path().read_text(encoding="utf-8"))
    emb = CachedEmbedder(cache_dir() / "embeddings.npz")
    out: list[str] = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    if not args.engine_only:
        say("Offline, leave-one-conversation-out (R@1 | R@5 | R@10 | R@20, mean over the five folds):")
        say()
        say("| ingest | ranking | R@1 | R@5 | R@10 | R@20 | worst fold R@10 |")
        say("|---|---|---|---|---|---|---|")
        picks = {}
        for ingest in ingests:
            convs = dump(data, ingest, emb)
            prepare(convs, ingest)
            for r in ("keyword", "vector"):
                per = np.array([recall([c], r) for c in convs])
                say(f"| {ingest} | {r} | {fmt(per.mean(axis=0))} | {per[:, 2].min():.3f} |")
            old = Variant(derive_speaker=False, day=False, time=0.0, reach=1)
            rnd1 = Variant(speaker=0.5, date=2.0, time=1.0, reach=1)
            fixed = (
                ("hybrid, the code and defaults before round 1", old),
                ('+ speaker from "Name:" (old defaults)', replace(old, derive_speaker=True)),
                ("+ a named day: that day only", replace(old, derive_speaker=True, day=True)),
                (
                    "+ time boost 0.5 for when-questions",
                    replace(old, derive_speaker=True, day=True, time=0.5),
                ),
                ("round 1's defaults (context one turn each way)", rnd1),
                ("+ session context two turns each way (the defaults)", replace(rnd1, reach=2)),
            )
            for name, v in fixed:
                per = np.array([recall([c], v) for c in convs])
                say(f"| {ingest} | {name} | {fmt(per.mean(axis=0))} | {per[:, 2].min():.3f} |")
            t0 = time.perf_counter()
            folds, chosen, overall, _ = loo(convs, Variant())
            picks[ingest] = (overall, chosen)
            say(
                f"| {ingest} | **hybrid, all of it, settings chosen leave-one-out** |"
                f" {fmt(folds.mean(axis=0))} | {folds[:, 2].min():.3f} |"
            )
            print(f"({time.perf_counter() - t0:.0f} s)", flush=True)
        say()
        for ingest, (v, per_fold) in picks.items():
            say(
                f"- {ingest}: chosen on all five: {describe(v)}; per fold: "
                + "; ".join(map(describe, per_fold))
            )
    if not args.offline_only:
        say()
        say(
            "The engine end to end at its defaults (whole dev set; R@1 | R@5 | R@10 | R@20, mean over"
            " conversations):"
        )
        say()
        say("| ingest | keyword | vector | hybrid | hybrid p50 ms |")
        say("|---|---|---|---|---|")
        for ingest in ingests:
            r = engine_run(data, ingest, emb, None)
            cells = [fmt(np.mean(r["per"][m], axis=0)) for m in ("keyword", "vector", "hybrid")]
            say(f"| {ingest} | {cells[0]} | {cells[1]} | {cells[2]} | {r['p50_ms']:.1f} |")
        say()
        say(f"Code: {os.environ.get('LOCOMO_PLAIN_TAG') or 'this branch'}. Settings: `{SearchSettings()}`")
    (out_dir() / "locomo_plain.md").write_text("\n".join(out) + "\n", encoding="utf-8")
    if args.write:
        write_section("locomo_plain", "## LoCoMo on a plain ingest (bench/locomo_plain.py)\n\n"
                      f"Machine: {machine()}.\n" + "\n".join(out))  # fmt: skip


if __name__ == "__main__":
    main()
