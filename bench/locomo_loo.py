"""LoCoMo leave-one-conversation-out: is a fusion setting chosen on four conversations good on the
fifth? Every retriever's candidates are dumped once per conversation through the engine (its keyword
plan and ranks, its vector KNN: the same calls hybrid search makes), then fusion variants are scored
offline on those lists, mirroring engine/retrieval/fusion.py.

For each of the five dev conversations in turn, settings are chosen on the other four and scored on
it; the mean and the worst of those five fold scores say how well tuning generalises. Settings are
chosen by the mean R@10 over each grid point and its one-step neighbours (a flat region, not a
peak), and the neighbourhood of the chosen point is printed. `--heldout FILE` also scores LoCoMo
conversations never tuned on (e.g. LoCoMo's locomo10.json, whose conversations 5-9 are not in the
dev split; read from outside the project, never copied into it).

    python bench/locomo_loo.py [--heldout /path/to/locomo10.json] [--write]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
from pathlib import Path

import numpy as np
from common import CachedEmbedder, locomo_path, machine, out_dir, write_section
from locomo import heldout, question_candidates, turn_content, turns
from locomo_loo_fusion import Variant, prepare, recall

from engine import FixedClock, open_engine
from engine.config import SearchSettings

DEPTH = 200  # candidates dumped per retriever; fusion variants read up to this many
KS = (1, 5, 10, 20)


def dump(data: list[dict], tag: str, style: str = "speaker") -> list[dict]:
    """Per conversation: its turns (id order, session, speaker) and per question the keyword and
    vector candidates [(id, score)] as the engine returns them. Cached in bench/out/locomo/."""
    digest = hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]
    path = out_dir("locomo") / f"loo_{tag}_{style}_{digest}.json"  # the data's own: a new file re-dumps
    if path.exists():
        return json.loads(path.read_text())
    emb = CachedEmbedder(out_dir("locomo") / "embeddings.npz")
    convs = []
    for i, conv in enumerate(data):
        db = out_dir("locomo") / f"loo_{tag}{i}.db"
        for s in ("", "-wal", "-shm"):
            Path(str(db) + s).unlink(missing_ok=True)
        eng = open_engine(db, embedder=emb, clock=FixedClock("2026-01-01T00:00:00Z"), actor="bench")
        items = [
            {
                "content": turn_content(t, style),
                "session_id": f"s{s}",
                "metadata": {"dia_id": t["dia_id"], "session": s, "date": d, "speaker": t["speaker"]},
            }
            for s, d, t in turns(conv)
        ]
        ids = eng.add_memories(items, dedup=False)
        by_dia = {it["metadata"]["dia_id"]: m for it, m in zip(items, ids, strict=True)}
        mems = [
            {
                "id": m,
                "session": it["metadata"]["session"],
                "speaker": it["metadata"]["speaker"],
                "date": it["metadata"]["date"],
                "words": len(it["content"].split()) - 1,
            }
            for it, m in zip(items, ids, strict=True)
        ]
        qs = question_candidates(eng, conv, by_dia, DEPTH)
        emb.save()
        eng.close()
        convs.append({"conv": i, "mems": mems, "qs": qs})
        print(f"dumped {tag} conversation {i}: {len(mems)} turns, {len(qs)} questions", flush=True)
    path.write_text(json.dumps(convs))
    return convs


# -- fusion variants, offline ---------------------------------------------------------------------


# Each idea's row is tuned over FIT (fusion share x session context) with the idea on; the final
# choice over FULL, which also tunes the speaker and date boosts. `candidates` is shown as a
# neighbourhood only (100 vs 50-200 moves R@10 by < 0.01).
FIT = {
    "keyword_share": (0.4, 0.5, 0.6, 0.7, 0.8),
    "session_context": (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5),
}
FULL = {
    "keyword_share": (0.4, 0.5, 0.6, 0.7, 0.8),
    "session_context": (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4),
    "speaker": (0.0, 0.25, 0.5, 1.0),
    "date": (0.0, 0.25, 0.5, 1.0, 2.0),
}
STEPS = {**FIT, **FULL, "candidates": (50, 100, 150, 200)}


def grid_points(base: Variant, grid: dict) -> list[Variant]:
    names = list(grid)
    return [
        Variant(**{**base.__dict__, **dict(zip(names, vals, strict=True))})
        for vals in itertools.product(*(grid[n] for n in names))
    ]


def neighbours(v: Variant, grid: dict) -> list[Variant]:
    """The points one step away along each setting of `grid`."""
    out = []
    for n, vals in grid.items():
        i = vals.index(getattr(v, n))
        for j in (i - 1, i + 1):
            if 0 <= j < len(vals):
                out.append(Variant(**{**v.__dict__, n: vals[j]}))
    return out


def choose(per_conv: dict[int, dict[Variant, float]], train: list[int], grid: dict) -> Variant:
    """The grid point whose own and neighbours' mean R@10 over `train` is highest (a flat region)."""
    pts = list(per_conv[train[0]])

    def score(v: Variant) -> float:
        return float(np.mean([np.mean([per_conv[c][w] for c in train]) for w in [v, *neighbours(v, grid)]]))

    return max(pts, key=score)


def loo(dev: list[dict], base: Variant, grid: dict) -> tuple[list[float], Variant, dict]:
    """Per fold: settings chosen on the other four conversations, R@10 on this one. Also the
    choice made on all five (what the defaults would be), and every point's per-conversation R@10."""
    pts = grid_points(base, grid)
    per_conv = {i: {v: float(recall([c], v)[2]) for v in pts} for i, c in enumerate(dev)}
    folds = []
    for i in range(len(dev)):
        train = [j for j in range(len(dev)) if j != i]
        folds.append(per_conv[i][choose(per_conv, train, grid)])
    return folds, choose(per_conv, list(range(len(dev))), grid), per_conv


IDEAS: tuple[tuple[str, dict], ...] = (
    ("defaults before (convex, top 100, session context)", {}),
    ("BM25 min-max scaled (not / best)", {"norm": "minmax"}),
    ("decisive keyword match, margin 1.5", {"decisive": 1.5}),
    ("decisive keyword match, margin 2.0", {"decisive": 2.0}),
    ("short turns (<= 6 words) pass on double context", {"short_words": 6}),
    ("vector pseudo-relevance feedback (query + 0.5 x top 3)", {"prf": 0.5}),
    ("named speaker's turns x1.5", {"speaker": 0.5}),
    ("turns of the named month/year x1.5", {"date": 0.5}),
    ("named speaker x1.5 and month/year x1.5", {"speaker": 0.5, "date": 0.5}),
    ("... and decisive keyword match, margin 1.5", {"speaker": 0.5, "date": 0.5, "decisive": 1.5}),
)


def fmt(a) -> str:
    return " | ".join(f"{x:.3f}" for x in a)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--heldout",
        default="",
        help="LoCoMo conversations never tuned on (json, e.g. LoCoMo's locomo10.json: dev ones are skipped)",
    )
    ap.add_argument("--quick", action="store_true", help="ideas at the defaults only, no LOO grid")
    ap.add_argument("--write", action="store_true", help="write the tables to BENCHMARKS.md")
    args = ap.parse_args()
    dev_data = json.loads(locomo_path().read_text(encoding="utf-8"))
    dev = dump(dev_data, "dev")
    prepare(dev, dev_data)
    held: list[dict] = []
    if args.heldout:
        held_data = heldout(args.heldout, dev_data)
        held = dump(held_data, "heldout")
        prepare(held, held_data)
    out: list[str] = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    nq = sum(len(c["qs"]) for c in dev)
    nh = sum(len(c["qs"]) for c in held)
    say(
        f"Dev: {len(dev)} conversations, {nq} questions; held-out: {len(held)} conversations, {nh} questions."
    )
    say()
    say("| retriever | dev R@1 | R@5 | R@10 | R@20 | held-out R@1 | R@5 | R@10 | R@20 |")
    say("|---|---|---|---|---|---|---|---|---|")
    for r in ("keyword", "vector"):
        say(f"| {r} | {fmt(recall(dev, r))} | {fmt(recall(held, r)) if held else ''} |")
    say()
    say("Each idea alone on the fusion before it; keyword share and session context re-chosen per fold:")
    say()
    say(
        "| idea (hybrid) | dev R@1 | R@5 | R@10 | R@20 | LOO R@10 mean | worst fold | chosen on all 5"
        " | held-out R@1 | R@5 | R@10 | R@20 |"
    )
    say("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, change in IDEAS:
        base = Variant(keyword_share=0.6, session_context=0.15, **change)
        if args.quick:
            folds, chosen = [float("nan")], base
        else:
            folds, chosen, _ = loo(dev, base, FIT)
        picked = f"share {chosen.keyword_share}, context {chosen.session_context}"
        say(
            f"| {name} | {fmt(recall(dev, base))} | {np.mean(folds):.3f} | {min(folds):.3f} | {picked} | "
            + (fmt(recall(held, chosen)) if held else "")
            + " |"
        )
    if args.quick:
        return
    final = Variant(**FINAL)
    folds, chosen, _ = loo(dev, final, FULL)
    say()
    say(
        f"Final grid ({' x '.join(f'{n} {v}' for n, v in FULL.items())}, {final_extra(final)}): "
        f"LOO R@10 per fold {', '.join(f'{x:.3f}' for x in folds)}; mean {np.mean(folds):.3f}, "
        f"worst {min(folds):.3f}. Chosen on all five: {describe(chosen)}."
    )
    say()
    d = SearchSettings()
    chosen_by_loo = chosen
    chosen = Variant(
        keyword_share=d.keyword_share,
        session_context=d.session_context,
        speaker=d.speaker_boost,
        date=d.date_boost,
        candidates=d.candidates,
    )
    per = [recall([c], chosen)[2] for c in dev]
    say(
        f"The defaults ({describe(chosen)}): dev R@10 per conversation {', '.join(f'{x:.3f}' for x in per)}"
        f" (worst {min(per):.3f})."
    )
    say()
    say("Neighbourhood of the defaults (dev R@10 / held-out R@10 when one setting moves one step):")
    say()
    say("| setting | one step down | chosen | one step up |")
    say("|---|---|---|---|")
    here = f"{recall(dev, chosen)[2]:.3f}" + (f" / {recall(held, chosen)[2]:.3f}" if held else "")
    for n, vals in STEPS.items():
        i = vals.index(getattr(chosen, n))
        cells = []
        for j in (i - 1, i + 1):
            if 0 <= j < len(vals):
                w = Variant(**{**chosen.__dict__, n: vals[j]})
                cells.append(
                    f"{vals[j]}: {recall(dev, w)[2]:.3f}" + (f" / {recall(held, w)[2]:.3f}" if held else "")
                )
            else:
                cells.append("-")
        say(f"| {n} | {cells[0]} | {getattr(chosen, n)}: {here} | {cells[1]} |")
    if held:
        say()
        say("Held-out conversations (never tuned on):")
        say()
        say("| retriever | R@1 | R@5 | R@10 | R@20 |")
        say("|---|---|---|---|---|")
        for r in ("keyword", "vector"):
            say(f"| {r} | {fmt(recall(held, r))} |")
        say(f"| hybrid before | {fmt(recall(held, Variant()))} |")
        say(f"| hybrid, the defaults | {fmt(recall(held, chosen))} |")
        say(f"| hybrid, the leave-one-out pick | {fmt(recall(held, chosen_by_loo))} |")
    (out_dir() / "locomo_loo.md").write_text("\n".join(out) + "\n", encoding="utf-8")
    if args.write:
        write_section(
            "locomo_loo",
            "## LoCoMo leave-one-conversation-out and ablation (bench/locomo_loo.py)\n\n"
            f"Machine: {machine()}.\n" + HOW + "\n".join(out),
        )


HOW = """Every retriever's top 200 per question is dumped once through the engine (its keyword plan and
ranks, its vector KNN), then fusion variants are scored on those lists offline, mirroring
engine/retrieval/fusion.py (at the defaults before, offline and engine agree to the third
decimal: 0.375 / 0.660 / 0.766 / 0.822). Leave-one-out: for each dev conversation, settings are
chosen on the other four by the mean R@10 of a grid point and its one-step neighbours (a flat
region, not a peak) and scored on it; "LOO mean / worst" are over the five folds. Held-out
figures use the point chosen on all five dev conversations and are never used to choose.

"""


# The final grid's fixed parts: what the ablation kept besides the grid's own settings.
FINAL: dict = {"candidates": 100}


def final_extra(v: Variant) -> str:
    return f"top {v.candidates} each" + (f", decisive margin {v.decisive}" if v.decisive else "")


def describe(v: Variant) -> str:
    return (
        f"keyword share {v.keyword_share}, session context {v.session_context}, speaker boost {v.speaker},"
        f" date boost {v.date}, top {v.candidates}"
        + (f", decisive margin {v.decisive}" if v.decisive else "")
    )


if __name__ == "__main__":
    main()
