"""The offline half of bench/locomo_plain.py: fusion variants scored on the dumped candidate lists
(mirroring engine/retrieval/fusion.py and search.py, without state weighting) and the
leave-one-conversation-out choice of settings (a grid point and its one-step neighbours)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np

KS = (1, 5, 10, 20)


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
    reach: int = 2  # session context: turns each way (search.session_reach; 1 = the code before)


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
    for m in pool:  # session neighbours of each candidate (two each way) can gain context
        ids += [
            nb
            for nb in (m - 2, m - 1, m + 1, m + 2)
            if nb in mems and mems[nb]["session"] == mems[m]["session"]
        ]
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
    prev2 = np.array([pos.get(m - 2, -1) if same(m, m - 2) else -1 for m in ids])
    next2 = np.array([pos.get(m + 2, -1) if same(m, m + 2) else -1 for m in ids])
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
        prev2=prev2,
        next2=next2,
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
    if v.reach > 1:
        total = total + pad[a["prev2"]] + pad[a["next2"]]
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


def describe(v: Variant) -> str:
    return (
        f"keyword share {v.keyword_share}, session context {v.session_context}, speaker {v.speaker},"
        f" date {v.date}{' (day)' if v.day else ''}, time {v.time}, reach {v.reach}"
    )
