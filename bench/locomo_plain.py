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
import itertools
import json
import os
import re
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from common import CachedEmbedder, locomo_path, machine, out_dir, write_section
from locomo import question_candidates, turn_content, turns

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


# -- fusion variants, offline ----------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    keyword_share: float = 0.6
    session_context: float = 0.35
    speaker: float = 0.25
    date: float = 1.0
    time: float = 0.0
    day: bool = True  # a question naming a day boosts that day only (False: its month)
    derive_speaker: bool = True  # a leading "Name:" is a speaker (False: metadata only, the old code)
    candidates: int = 100


def _scale(vals: list[float], low: float | None) -> np.ndarray:
    a = np.asarray(vals, dtype=float)
    if not len(a):
        return a
    lo = a.min() if low is None else low
    span = a.max() - lo
    return np.clip((a - lo) / span, 0, 1) if span > 1e-9 else np.ones_like(a)


def arrays(conv: dict, q: dict, cands: int) -> dict:
    from engine.retrieval.query import asks_when, named_day, named_one, named_time

    key = ("_arr", cands)
    if key in q:
        return q[key]
    mems = conv["_mem"]
    kw, vec = q["kw"][:cands], q["vec"][:cands]
    pool = list(dict.fromkeys([m for m, _ in kw] + [m for m, _ in vec]))
    ids = list(pool)
    for m in pool:  # session neighbours of each candidate can gain context
        ids += [nb for nb in (m - 1, m + 1) if nb in mems and mems[nb]["session"] == mems[m]["session"]]
    ids = list(dict.fromkeys(ids))
    pos = {m: i for i, m in enumerate(ids)}
    kwv, vv = np.zeros(len(ids)), np.zeros(len(ids))
    if kw:
        kwv[[pos[m] for m, _ in kw]] = _scale([s for _, s in kw], 0.0)
    if vec:
        vv[[pos[m] for m, _ in vec]] = _scale([s for _, s in vec], None)
    same = lambda a, b: b in mems and mems[a]["session"] == mems[b]["session"]  # noqa: E731
    prev = np.array([pos.get(m - 1, -1) if same(m, m - 1) else -1 for m in ids])
    nxt = np.array([pos.get(m + 1, -1) if same(m, m + 1) else -1 for m in ids])
    text = q["q"]
    month, year = named_time(text)
    day = named_day(text) if month else None
    in_pool = np.array([m in set(pool) for m in ids])
    spk_derived = {mems[m]["speaker"] for m in pool if mems[m]["speaker"]}
    spk_meta = {mems[m]["meta_speaker"] for m in pool if mems[m]["meta_speaker"]}
    out = {}
    for tag, names, field in (("spk", spk_derived, "speaker"), ("spk_meta", spk_meta, "meta_speaker")):
        n = named_one(text, names)
        out[tag] = np.array(
            [n is not None and (mems[m][field] or "").lower() == n.lower() for m in ids], float
        )
    timed = bool(month or year)

    def dated(m: int, with_day: bool) -> bool:
        x = mems[m]
        return (
            timed
            and (month is None or x["month"] == month)
            and (year is None or x["year"] == year)
            and (not with_day or day is None or x["day"] == day)
        )

    out.update(
        ids=np.array(ids),
        kw=kwv,
        vec=vv,
        prev=prev,
        next=nxt,
        in_pool=in_pool,
        date_day=np.array([dated(m, True) for m in ids], float),
        date_month=np.array([dated(m, False) for m in ids], float),
        time=np.array([asks_when(text) and mems[m]["timed"] for m in ids], float),
        ev=np.array([m in set(q["ev"]) for m in ids]),
    )
    q[key] = out
    return out


def best_rank(conv: dict, q: dict, v: Variant) -> int:
    """1-based rank of the best-placed evidence turn under `v` (10**9: not a candidate)."""
    a = arrays(conv, q, v.candidates)
    if not a["ev"].any():
        return 10**9
    fused = (v.keyword_share * a["kw"] + (1 - v.keyword_share) * a["vec"]) * a["in_pool"]
    f = 1 + v.speaker * (a["spk"] if v.derive_speaker else a["spk_meta"])
    f = f * (1 + v.date * (a["date_day"] if v.day else a["date_month"])) * (1 + v.time * a["time"])
    fused = fused * f
    pad = np.append(v.session_context * fused * (fused > 0), 0.0)
    total = fused + pad[a["prev"]] + pad[a["next"]]
    ids = a["ids"]
    best = 10**9
    for i in np.flatnonzero(a["ev"]):
        if total[i] <= 0:
            continue
        r = int(((total > total[i]) | ((total == total[i]) & (ids < ids[i]))).sum()) + 1
        best = min(best, r)
    return best


def prepare(convs: list[dict], ingest: str) -> None:
    for c in convs:
        c["_mem"] = {m["id"]: m for m in c["mems"]}
        for m in c["mems"]:
            # the old code's speaker: metadata only (a plain ingest has none)
            m["meta_speaker"] = m["speaker"] if ingest == "metadata" else None


def recall(convs: list[dict], v: Variant | str) -> np.ndarray:
    out = []
    for c in convs:
        for q in c["qs"]:
            if isinstance(v, Variant):
                r = best_rank(c, q, v)
                out.append([r <= k for k in KS])
            else:
                order = [m for m, _ in q["kw" if v == "keyword" else "vec"]]
                ev = set(q["ev"])
                out.append([bool(ev.intersection(order[:k])) for k in KS])
    return np.array(out, dtype=float).mean(axis=0)


GRID = {
    "keyword_share": (0.5, 0.6, 0.7),
    "session_context": (0.25, 0.35, 0.45),
    "speaker": (0.0, 0.25, 0.5),
    "date": (0.5, 1.0, 2.0),
    "time": (0.0, 0.5, 1.0, 2.0),
}


def points(base: Variant) -> list[Variant]:
    names = list(GRID)
    return [
        replace(base, **dict(zip(names, vals, strict=True))) for vals in itertools.product(*GRID.values())
    ]


def neighbours(v: Variant) -> list[Variant]:
    out = []
    for n, vals in GRID.items():
        i = vals.index(getattr(v, n))
        out += [replace(v, **{n: vals[j]}) for j in (i - 1, i + 1) if 0 <= j < len(vals)]
    return out


def loo(convs: list[dict], base: Variant) -> tuple[np.ndarray, list[Variant], Variant, dict]:
    """Per fold (R@1..R@20 on the left-out conversation of the point chosen on the other four),
    the chosen points, the point chosen on all five, and every point's per-conversation recall."""
    pts = points(base)
    per = {i: {v: recall([c], v) for v in pts} for i, c in enumerate(convs)}
    w = np.array([len(c["qs"]) for c in convs], dtype=float)

    def score(v: Variant, train: list[int]) -> float:
        vals = [
            np.average([per[c][u][:3].mean() for c in train], weights=w[train]) for u in [v, *neighbours(v)]
        ]
        return float(np.mean(vals))

    folds, chosen = [], []
    for i in range(len(convs)):
        train = [j for j in range(len(convs)) if j != i]
        best = max(pts, key=lambda v, t=train: score(v, t))
        chosen.append(best)
        folds.append(per[i][best])
    overall = max(pts, key=lambda v: score(v, list(range(len(convs)))))
    return np.array(folds), chosen, overall, per


def fmt(a) -> str:
    return " | ".join(f"{x:.3f}" for x in a)


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
    args = ap.parse_args()
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
        for ingest in INGESTS:
            convs = dump(data, ingest, emb)
            prepare(convs, ingest)
            for r in ("keyword", "vector"):
                per = np.array([recall([c], r) for c in convs])
                say(f"| {ingest} | {r} | {fmt(per.mean(axis=0))} | {per[:, 2].min():.3f} |")
            old = Variant(derive_speaker=False, day=False, time=0.0)
            fixed = (
                ("hybrid, the code and defaults before", old),
                ('+ speaker from "Name:" (old defaults)', replace(old, derive_speaker=True)),
                ("+ a named day: that day only", replace(old, derive_speaker=True, day=True)),
                ("+ time boost 0.5 for when-questions", Variant(time=0.5)),
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
        for ingest in INGESTS:
            r = engine_run(data, ingest, emb, None)
            cells = [fmt(np.mean(r["per"][m], axis=0)) for m in ("keyword", "vector", "hybrid")]
            say(f"| {ingest} | {cells[0]} | {cells[1]} | {cells[2]} | {r['p50_ms']:.1f} |")
        say()
        say(f"Code: {os.environ.get('LOCOMO_PLAIN_TAG') or 'this branch'}. Settings: `{SearchSettings()}`")
    (out_dir() / "locomo_plain.md").write_text("\n".join(out) + "\n", encoding="utf-8")
    if args.write:
        write_section("locomo_plain", "## LoCoMo on a plain ingest (bench/locomo_plain.py)\n\n"
                      f"Machine: {machine()}.\n" + "\n".join(out))  # fmt: skip


def describe(v: Variant) -> str:
    return (
        f"keyword share {v.keyword_share}, session context {v.session_context}, speaker {v.speaker},"
        f" date {v.date}{' (day)' if v.day else ''}, time {v.time}"
    )


if __name__ == "__main__":
    main()
