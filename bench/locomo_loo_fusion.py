"""The offline half of bench/locomo_loo.py: fusion variants (an earlier mirror of
engine/retrieval/fusion.py with benchmark metadata; session context one turn each way) scored on the
dumped candidate lists."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from common import CachedEmbedder, out_dir
from locomo import turn_content, turns

from engine.retrieval.query import named_one, named_time

KS = (1, 5, 10, 20)


@dataclass(frozen=True)
class Variant:
    keyword_share: float = 0.6
    candidates: int = 100
    session_context: float = 0.15
    norm: str = "max"  # bm25 / best ("max") or min-max over the candidates ("minmax")
    decisive: float = 0.0  # >0: keyword rank 1 whose BM25 is >= this x the second's goes first
    speaker: float = 0.0  # share added to turns by a speaker the question names
    short_words: int = 0  # turns of at most this many words get session context both ways x2
    prf: float = 0.0  # vector Rocchio: query + this x mean of the top-3 fused turns' vectors
    date: float = 0.0  # share added to turns of a session dated in the month / year the question names


def _scale(vals: list[float], norm: str, floor: float = 0.0) -> list[float]:
    if not vals:
        return []
    top = vals[0] if norm != "minmax_unsorted" else max(vals)
    low = vals[-1] if norm == "minmax" else floor
    span = top - low
    return [min(1.0, max(0.0, (v - low) / span)) if span > 1e-9 else 1.0 for v in vals]


def rank(conv: dict, q: dict, v: Variant, speakers: dict[str, set[int]] | None = None) -> list[int]:
    kw = q["kw"][: v.candidates]
    vec = q["vec"][: v.candidates]
    if v.prf and "_vecs" in conv:
        first = rank(conv, q, Variant(**{**v.__dict__, "prf": 0.0}), speakers)[:3]
        ids, mat = conv["_ids"], conv["_vecs"]
        pos = {m: i for i, m in enumerate(ids)}
        qv = q["_qv"] + v.prf * mat[[pos[m] for m in first]].mean(axis=0)
        sims = mat @ (qv / np.linalg.norm(qv))
        top = np.argsort(-sims)[: v.candidates]
        vec = [[ids[i], float(sims[i])] for i in top]
    a = v.keyword_share
    fused: dict[int, float] = {}
    for (m, _), x in zip(kw, _scale([s for _, s in kw], v.norm), strict=True):
        fused[m] = fused.get(m, 0.0) + a * x
    for (m, _), x in zip(vec, _scale([s for _, s in vec], "minmax"), strict=True):
        fused[m] = fused.get(m, 0.0) + (1 - a) * x
    if v.speaker and speakers:
        named = named_one(q["q"], set(speakers))
        if named:
            for m in fused:
                if m in speakers[named]:
                    fused[m] *= 1 + v.speaker
    if v.date:
        month, year = named_time(q["q"])
        if month or year:
            dates = conv["_date"]
            for m in fused:
                dm, dy = dates.get(m, (None, None))
                if (month is None or dm == month) and (year is None or dy == year):
                    fused[m] *= 1 + v.date
    total = dict(fused)
    if v.session_context:
        sess = conv["_sess"]
        words = conv["_words"]
        for m, f in fused.items():
            if f <= 0:
                continue
            for nb in (m - 1, m + 1):
                if nb in sess and sess[nb] == sess[m]:
                    beta = v.session_context
                    if v.short_words and words[m] <= v.short_words:
                        beta *= 2
                    total[nb] = total.get(nb, 0.0) + beta * f
    order = sorted(total, key=lambda m: (-total[m], m))
    if v.decisive and len(kw) >= 1:
        top = kw[0][1]
        second = kw[1][1] if len(kw) > 1 else 0.0
        if top >= v.decisive * second and order and order[0] != kw[0][0]:
            order.remove(kw[0][0]) if kw[0][0] in order else None
            order.insert(0, kw[0][0])
    return order


def _arrays(conv: dict, q: dict, cands: int, norm: str) -> dict:
    """One question's candidates (and their session neighbours) as arrays, cached per depth."""
    key = ("_arr", cands, norm)
    if key in q:
        return q[key]
    kw, vec = q["kw"][:cands], q["vec"][:cands]
    sess = conv["_sess"]
    ids = list(dict.fromkeys([m for m, _ in kw] + [m for m, _ in vec]))
    for m in list(ids):
        ids += [nb for nb in (m - 1, m + 1) if nb in sess and sess[nb] == sess[m]]
    ids = list(dict.fromkeys(ids))
    pos = {m: i for i, m in enumerate(ids)}
    kwv, vv = np.zeros(len(ids)), np.zeros(len(ids))
    for (m, _), x in zip(kw, _scale([s for _, s in kw], norm), strict=True):
        kwv[pos[m]] = x
    for (m, _), x in zip(vec, _scale([s for _, s in vec], "minmax"), strict=True):
        vv[pos[m]] = x
    prev = np.array([pos.get(m - 1, -1) if sess.get(m - 1) == sess[m] else -1 for m in ids])
    nxt = np.array([pos.get(m + 1, -1) if sess.get(m + 1) == sess[m] else -1 for m in ids])
    named = named_one(q["q"], set(conv["_speakers"]))
    spk = np.array([named is not None and m in conv["_speakers"][named] for m in ids], dtype=float)
    month, year = named_time(q["q"])
    dates = conv["_date"]
    dat = np.array(
        [
            bool(month or year)
            and (month is None or dates[m][0] == month)
            and (year is None or dates[m][1] == year)
            for m in ids
        ],
        dtype=float,
    )
    ev = np.array([m in set(q["ev"]) for m in ids])
    arr = {
        "ids": np.array(ids),
        "kw": kwv,
        "vec": vv,
        "prev": prev,
        "next": nxt,
        "spk": spk,
        "date": dat,
        "ev": ev,
        "words": np.array([conv["_words"][m] for m in ids]),
        "kw_top": kw[0][0] if kw else None,
        "kw_margin": (kw[0][1] / kw[1][1] if len(kw) > 1 and kw[1][1] > 0 else float("inf")) if kw else 0.0,
    }
    q[key] = arr
    return arr


def best_rank(conv: dict, q: dict, v: Variant) -> int:
    """1-based rank of the best-placed evidence turn under `v` (10**9: not a candidate); the
    same ordering as rank(), in numpy."""
    if v.prf:
        order = rank(conv, q, v, conv["_speakers"])
        ev = set(q["ev"])
        return next((i + 1 for i, m in enumerate(order) if m in ev), 10**9)
    a = _arrays(conv, q, v.candidates, v.norm)
    fused = v.keyword_share * a["kw"] + (1 - v.keyword_share) * a["vec"]
    if v.speaker:
        fused = fused * (1 + v.speaker * a["spk"])
    if v.date:
        fused = fused * (1 + v.date * a["date"])
    beta = v.session_context * (1 + (a["words"] <= v.short_words)) if v.short_words else v.session_context
    give = beta * fused  # what each candidate passes on to each neighbour
    pad = np.append(give, 0.0)
    total = fused + pad[a["prev"]] + pad[a["next"]]
    if not a["ev"].any():
        return 10**9
    ids = a["ids"]
    if v.decisive and a["kw_top"] is not None and a["kw_margin"] >= v.decisive:
        top = int(np.flatnonzero(ids == a["kw_top"])[0])
        total = total.copy()
        total[top] = total.max() + 1.0
    best = None
    for i in np.flatnonzero(a["ev"]):
        r = int(((total > total[i]) | ((total == total[i]) & (ids < ids[i]))).sum()) + 1
        best = r if best is None else min(best, r)
    return best if best is not None else 10**9


def prepare(convs: list[dict], data: list[dict] | None = None, style: str = "speaker") -> None:
    emb = CachedEmbedder(out_dir("locomo") / "embeddings.npz") if data else None
    for c in convs:
        if emb is not None and data is not None:
            texts = [turn_content(t, style) for _, _, t in turns(data[c["conv"]])]
            c["_ids"] = [m["id"] for m in c["mems"]]
            c["_vecs"] = emb.embed(texts)
            for q in c["qs"]:
                q["_qv"] = emb.embed([q["q"]])[0]
        c["_sess"] = {m["id"]: m["session"] for m in c["mems"]}
        c["_words"] = {m["id"]: m["words"] for m in c["mems"]}
        c["_date"] = {m["id"]: named_time(m["date"]) for m in c["mems"]}
        sp: dict[str, set[int]] = {}
        for m in c["mems"]:
            sp.setdefault(m["speaker"], set()).add(m["id"])
        c["_speakers"] = sp


def hits(convs: list[dict], v: Variant | str) -> np.ndarray:
    """(questions, len(KS)) booleans: found at k."""
    out = []
    for c in convs:
        for q in c["qs"]:
            if v == "keyword":
                order = [m for m, _ in q["kw"]]
            elif v == "vector":
                order = [m for m, _ in q["vec"]]
            else:
                assert isinstance(v, Variant)
                r = best_rank(c, q, v)
                out.append([r <= k for k in KS])
                continue
            ev = set(q["ev"])
            out.append([bool(ev.intersection(order[:k])) for k in KS])
    return np.array(out, dtype=bool)


def recall(convs: list[dict], v: Variant | str) -> np.ndarray:
    h = hits(convs, v)
    return h.mean(axis=0) if len(h) else np.zeros(len(KS))
