"""LoCoMo plain ingest: ideas for R@10 judged leave-one-conversation-out (issue #26, round 2).

Reads the dump bench/locomo_plain.py writes (both retrievers' top 200 per question, each turn's
derived speaker / date / time expression) and the cached embeddings of every turn and question, so
the vector side is known for *every* turn of a conversation (exact cosine, as the engine's KNN).
Each idea is a family of fusion variants; for each, settings are chosen leave-one-conversation-out
exactly as bench/locomo_plain.py does (on the other four conversations, by the mean of R@1, R@5,
R@10 over a grid point and its one-step neighbours: a flat region, not a peak) and scored on the
conversation left out. The base grid every idea is re-chosen over: keyword share x session context
(speaker 0.5, date 2.0, time 1.0: the defaults). Data: /work/shared/data/locomo/ only.

    python bench/locomo_ideas.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from dataclasses import dataclass, field, replace

import numpy as np
from common import CachedEmbedder, locomo_path, out_dir
from locomo import turn_content, turns
from locomo_bm25 import add_bm25, bm25
from locomo_plain import INGESTS, cache_dir, dump

from engine.retrieval.query import asks_when, named_day, named_one, named_time

KS = (1, 5, 10, 20)


@dataclass(frozen=True)
class V:
    """One fusion variant (the engine's defaults unless set)."""

    keyword_share: float = 0.6
    session_context: float = 0.35
    speaker: float = 0.5
    date: float = 2.0
    time: float = 1.0
    kw_cands: int = 100
    vec_cands: int = 100
    ctx_form: str = "sum"  # "sum": beta x each neighbour; "max": beta x the better neighbour
    ctx_prev: float = 1.0  # multipliers on beta for the turn before / after
    ctx_next: float = 1.0
    ctx2: float = 0.0  # beta share for the turns two away
    ctx3: float = 0.0  # beta share for the turns three away
    ctx_raw: bool = False  # context from the fused score before the boosts
    vec_smooth: float = 0.0  # vector side: cos + g x mean cos of the adjacent turns (all turns)
    vec_low_rank: int = 0  # cosine scale's low end: the cosine at this rank (0: the pool's last)
    kw_minmax: bool = False
    k1: float = 0.0  # >0: BM25 recomputed offline with this k1 and `b` (FTS5's are 1.2 / 0.75)
    b: float = 0.75
    rrf_mix: float = 0.0  # + w x 60 / (60 + rank) of each retriever
    extra: tuple = field(default_factory=tuple)


def load(ingest: str = "plain") -> list[dict]:
    data = json.loads(locomo_path().read_text(encoding="utf-8"))
    emb = CachedEmbedder(cache_dir() / "embeddings.npz")
    convs = dump(data, ingest, emb)
    for c, conv in zip(convs, data, strict=True):
        texts = [turn_content(t, "speaker") for _, _, t in turns(conv)]
        assert [m["id"] for m in c["mems"]] == list(range(1, len(texts) + 1))
        tv = emb.embed(texts)
        sess = [m["session"] for m in c["mems"]]
        n = len(texts)
        prev = np.array([i - 1 if i > 0 and sess[i - 1] == sess[i] else n for i in range(n)])
        nxt = np.array([i + 1 if i + 1 < n and sess[i + 1] == sess[i] else n for i in range(n)])
        prev2 = np.array([prev[p] if p < n else n for p in prev])
        next2 = np.array([nxt[p] if p < n else n for p in nxt])
        prev3 = np.array([prev[p] if p < n else n for p in prev2])
        next3 = np.array([nxt[p] if p < n else n for p in next2])
        c.update(n=n, prev=prev, next=nxt, prev2=prev2, next2=next2, prev3=prev3, next3=next3)
        qv = emb.embed([q["q"] for q in c["qs"]])
        cos = qv @ tv.T
        mems = c["mems"]
        speakers = {m["speaker"] for m in mems if m["speaker"]}
        for q, row in zip(c["qs"], cos, strict=True):
            kw = np.zeros(n)
            kwr = np.full(n, 10**6)
            for r, (m, s) in enumerate(q["kw"]):
                kw[m - 1], kwr[m - 1] = s, r + 1
            top = [m for m, _ in q["vec"][:20]]
            got = [int(i) + 1 for i in np.argsort(-row, kind="stable")[:20]]
            q["_vec_agree"] = len(set(top) & set(got)) / max(1, len(top))
            text = q["q"]
            month, year = named_time(text)
            day = named_day(text) if month else None
            spk = named_one(text, speakers)
            timed = bool(month or year)
            q.update(
                _kw=kw,
                _kwr=kwr,
                _cos=row.astype(float),
                _spk=np.array(
                    [spk is not None and (m["speaker"] or "").lower() == spk.lower() for m in mems], float
                ),
                _date=np.array(
                    [
                        timed
                        and (month is None or m["month"] == month)
                        and (year is None or m["year"] == year)
                        and (day is None or m["day"] == day)
                        for m in mems
                    ],
                    float,
                ),
                _time=np.array([asks_when(text) and m["timed"] for m in mems], float),
                _ev=np.array(sorted({e - 1 for e in q["ev"]}), int),
            )
    return convs


def _pad(x: np.ndarray) -> np.ndarray:
    return np.append(x, 0.0)


def scores(c: dict, q: dict, v: V) -> np.ndarray:
    n = c["n"]
    cos = q["_cos"]
    if v.vec_smooth:
        cp = _pad(cos)
        has_p, has_n = c["prev"] < n, c["next"] < n
        nb = (cp[c["prev"]] + cp[c["next"]]) / np.maximum(1, has_p.astype(int) + has_n)
        cos = cos + v.vec_smooth * nb
    vrank = np.empty(n, int)
    vrank[np.argsort(-cos, kind="stable")] = np.arange(1, n + 1)
    vpool = vrank <= v.vec_cands
    top = cos[vpool].max()
    lo = cos[vpool].min() if not v.vec_low_rank else np.sort(cos)[::-1][min(n, v.vec_low_rank) - 1]
    vv = np.where(vpool, np.clip((cos - lo) / max(top - lo, 1e-9), 0, 1), 0.0)
    kws, kwr = (q["_kw"], q["_kwr"]) if not v.k1 else bm25(c, q, v.k1, v.b)
    kpool = kwr <= v.kw_cands
    kw = np.where(kpool, kws, 0.0)
    kv = np.zeros(n)
    if kpool.any():
        if v.kw_minmax:
            lo_k = kw[kpool].min()
            kv = np.where(kpool, (kw - lo_k) / max(kw[kpool].max() - lo_k, 1e-9), 0.0)
        else:
            kv = kw / kw[kpool].max()
    fused = v.keyword_share * kv + (1 - v.keyword_share) * vv
    if v.rrf_mix:
        fused = (
            fused
            + v.rrf_mix
            * (np.where(kpool, 60 / (60 + q["_kwr"]), 0.0) + np.where(vpool, 60 / (60 + vrank), 0.0))
            / 2
        )
    f = (1 + v.speaker * q["_spk"]) * (1 + v.date * q["_date"]) * (1 + v.time * q["_time"])
    boosted = fused * f
    src = _pad(fused if v.ctx_raw else boosted)
    b = v.session_context
    if v.ctx_form == "max":
        near = b * np.maximum(v.ctx_prev * src[c["next"]], v.ctx_next * src[c["prev"]])
    else:  # my neighbour after me gives me context as "the turn before it" (search.py's shape)
        near = b * (v.ctx_prev * src[c["next"]] + v.ctx_next * src[c["prev"]])
    if v.ctx2:
        near = near + b * v.ctx2 * (src[c["next2"]] + src[c["prev2"]])
    if v.ctx3:
        near = near + b * v.ctx3 * (src[c["next3"]] + src[c["prev3"]])
    # only candidates pass context on (search.py: fused > 0)
    return boosted + near


def best_rank(c: dict, q: dict, v: V) -> int:
    ev = q["_ev"]
    if not len(ev):
        return 10**9
    t = scores(c, q, v)
    best = 10**9
    for i in ev:
        if t[i] <= 0:
            continue
        r = int(((t > t[i]) | ((t == t[i]) & (np.arange(c["n"]) < i))).sum()) + 1
        best = min(best, r)
    return best


def recall(c: dict, v: V) -> np.ndarray:
    ranks = np.array([best_rank(c, q, v) for q in c["qs"]])
    return np.array([(ranks <= k).mean() for k in KS])


BASE_GRID = {"keyword_share": (0.5, 0.6, 0.7), "session_context": (0.25, 0.35, 0.45)}


def grid_points(idea: dict) -> tuple[list[V], dict]:
    g = {**BASE_GRID, **idea}
    names = list(g)
    return [V(**dict(zip(names, vals, strict=True))) for vals in itertools.product(*g.values())], g


def neighbours(v: V, g: dict) -> list[V]:
    out = []
    for n, vals in g.items():
        i = vals.index(getattr(v, n))
        out += [replace(v, **{n: vals[j]}) for j in (i - 1, i + 1) if 0 <= j < len(vals)]
    return out


def loo(convs: list[dict], idea: dict) -> tuple[np.ndarray, list[V], V, dict]:
    pts, g = grid_points(idea)
    per = {i: {v: recall(c, v) for v in pts} for i, c in enumerate(convs)}
    w = np.array([len(c["qs"]) for c in convs], float)

    def score(v: V, train: list[int]) -> float:
        return float(
            np.mean(
                [
                    np.average([per[c][u][:3].mean() for c in train], weights=w[train])
                    for u in [v, *neighbours(v, g)]
                ]
            )
        )

    folds, chosen = [], []
    for i in range(len(convs)):
        train = [j for j in range(len(convs)) if j != i]
        best = max(pts, key=lambda v, t=train: score(v, t))
        chosen.append(best)
        folds.append(per[i][best])
    overall = max(pts, key=lambda v: score(v, list(range(len(convs)))))
    return np.array(folds), chosen, overall, per


IDEAS: dict[str, dict] = {
    "defaults (re-chosen share x context)": {},
    "candidates: keyword 50/100/150/200": {"kw_cands": (50, 100, 150, 200)},
    "candidates: vector 50/100/150/200": {"vec_cands": (50, 100, 150, 200)},
    "cosine scale low end at rank 20/50/100/200 (pool 100)": {"vec_low_rank": (20, 50, 100, 200)},
    "BM25 min-max scaled": {"kw_minmax": (False, True)},
    "+ RRF term 0/0.05/0.1/0.2": {"rrf_mix": (0.0, 0.05, 0.1, 0.2)},
    "context: better neighbour only (max)": {"ctx_form": ("sum", "max")},
    "context from the fused score before the boosts": {"ctx_raw": (False, True)},
    "context: the turn before x0.5/1/1.5": {"ctx_next": (0.5, 1.0, 1.5)},
    "context: the turn after x0.5/1/1.5": {"ctx_prev": (0.5, 1.0, 1.5)},
    "context: turns two away 0/0.25/0.5": {"ctx2": (0.0, 0.25, 0.5)},
    "vector side: cos + g x adjacent turns' cos, g 0/0.1/0.2/0.3/0.5": {
        "vec_smooth": (0.0, 0.1, 0.2, 0.3, 0.5)
    },
    "R2 context before the boosts, context 0.25-0.65": {
        "ctx_raw": (False, True),
        "session_context": (0.25, 0.35, 0.45, 0.55, 0.65),
    },
    "R2 turns two away 0-1.0": {"ctx2": (0.0, 0.25, 0.5, 0.75, 1.0)},
    "R3 turns two away 0.5-2.0, three away 0-1.0": {"ctx2": (0.5, 1.0, 1.5, 2.0), "ctx3": (0.0, 0.5, 1.0)},
    "R3 before the boosts, two away 0.5-2.0": {
        "ctx_raw": (True,),
        "session_context": (0.25, 0.35, 0.45, 0.55),
        "ctx2": (0.5, 1.0, 1.5, 2.0),
    },
    "R4 reach 2, boosts re-chosen": {
        "ctx2": (1.0,),
        "speaker": (0.25, 0.5, 1.0),
        "date": (1.0, 2.0, 3.0),
        "time": (0.5, 1.0, 2.0),
    },
    "R5 BM25 k1 x b (reach 2)": {
        "ctx2": (1.0,),
        "k1": (0.6, 0.9, 1.2, 1.5, 2.0),
        "b": (0.25, 0.5, 0.75, 1.0),
    },
    "R2 before the boosts + turns two away": {
        "ctx_raw": (True,),
        "session_context": (0.25, 0.35, 0.45, 0.55, 0.65),
        "ctx2": (0.0, 0.25, 0.5, 0.75, 1.0),
    },
}


def fmt(a) -> str:
    return " | ".join(f"{x:.3f}" for x in a)


STEPS = {  # one step down / up from the defaults, for the neighbourhood table
    "keyword_share": (0.5, 0.7),
    "session_context": (0.25, 0.45),
    "ctx2": (0.5, 1.5),
    "speaker": (0.25, 1.0),
    "date": (1.0, 3.0),
    "time": (0.5, 2.0),
}


def flat(convs: list[dict], at: V) -> list[str]:
    """Whole-dev R@1 / R@10 (mean over conversations) at `at` and one step either side of it."""

    def cell(v: V) -> str:
        r = np.array([recall(c, v) for c in convs]).mean(axis=0)
        return f"{r[0]:.3f} / {r[2]:.3f}"

    out = [f"at {cell(at)}", "| setting | one step down | chosen | one step up |", "|---|---|---|---|"]
    for k, (lo, hi) in STEPS.items():
        down, up = cell(replace(at, **{k: lo})), cell(replace(at, **{k: hi}))
        out.append(f"| {k} | {lo}: {down} | {getattr(at, k)} | {hi}: {up} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=None, help="idea names containing these words")
    ap.add_argument("--flat", action="store_true", help="the neighbourhood of the defaults (reach 2)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    convs = load(INGESTS[0])
    agree = np.mean([q["_vec_agree"] for c in convs for q in c["qs"]])
    if args.only and any("BM25" in w for w in args.only):
        data = json.loads(locomo_path().read_text(encoding="utf-8"))
        print(f"offline BM25 top 10 = the engine's: {add_bm25(convs, data):.3f}", flush=True)
    print(f"loaded in {time.perf_counter() - t0:.0f} s; exact cosine top 20 = dump's top 20: {agree:.3f}")
    base = np.array([recall(c, V()) for c in convs])
    print(f"defaults, per conversation R@10: {fmt(base[:, 2])}; mean {fmt(base.mean(axis=0))}")
    if args.flat:
        for line in flat(convs, V(ctx2=1.0)):
            print(line, flush=True)
    out = [
        "| idea | LOO R@1 | R@5 | R@10 | R@20 | worst fold R@10 | chosen on all five |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, idea in IDEAS.items():
        if args.only and not any(w in name for w in args.only):
            continue
        t1 = time.perf_counter()
        folds, chosen, overall, _ = loo(convs, idea)
        pick = {k: getattr(overall, k) for k in {**BASE_GRID, **idea}}
        line = f"| {name} | {fmt(folds.mean(axis=0))} | {folds[:, 2].min():.3f} | {pick} |"
        out.append(line)
        print(
            line,
            f"({time.perf_counter() - t1:.0f} s; folds {[{k: getattr(v, k) for k in idea} for v in chosen]})",
            flush=True,
        )
    (out_dir() / "locomo_ideas.md").write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
