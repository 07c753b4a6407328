"""The curator's other detectors: near-duplicate rules (same prefix, or by meaning), idle memories
to archive, reinforced learnings to promote to rules, dormant rules to retire. Reads only."""

from __future__ import annotations

import numpy as np

from engine.curator.candidates import Candidate, content_sha, fingerprint
from engine.curator.memory_merge import pairwise
from engine.curator.risky import flag
from engine.curator.state import float_ as _float
from engine.curator.state import int_ as _int
from engine.curator.state import skip as _skip
from engine.curator.state import str_ as _str
from engine.curator.union_find import UnionFind
from engine.storage.port import Connection

DAY = 86400.0


def rule_clusters(
    conn: Connection, settings, embedder, malformed: list | None = None
) -> tuple[list[Candidate], dict]:
    """Near-duplicate rules of one agent: the same first N characters, or cosine >= threshold."""
    cs = settings.curator
    rows = []
    for r in conn.curator_queries.open_rules():
        with _skip(malformed, "rule", r):  # text a string, score finite, agent text: or skipped
            if not isinstance(r["text"], str) or not isinstance(r["agent"], str):
                raise TypeError("text or agent is not text")
            _float(r["score"]), _float(r["last_reinforced_at"] or 0), _int(r["pinned"])
            rows.append(r)
    stats = {"rules": len(rows), "rules_by_meaning": embedder is not None}
    if len(rows) < 2:
        return [], stats
    uf = UnionFind()
    prefix: dict[tuple[str, str], int] = {}
    for r in rows:
        key = (r["agent"], " ".join(r["text"].lower().split())[: cs.rule_prefix_chars])
        if len(key[1]) >= min(cs.rule_prefix_chars, 12) and key in prefix:
            uf.union(prefix[key], int(r["id"]))
        prefix.setdefault(key, int(r["id"]))
    vec_of: dict[int, np.ndarray] = {}
    if embedder is not None:
        vecs = embedder.embed([r["text"] for r in rows])
        vec_of = {int(r["id"]): vecs[i] for i, r in enumerate(rows)}
        sims = vecs @ vecs.T
        for i, j in zip(*np.nonzero(np.triu(sims, 1) >= cs.merge_threshold), strict=True):
            if rows[int(i)]["agent"] == rows[int(j)]["agent"]:
                uf.union(int(rows[int(i)]["id"]), int(rows[int(j)]["id"]))
    by_id = {int(r["id"]): r for r in rows}
    out = []
    for g in uf.groups():
        survivor = sorted(
            g,
            key=lambda m: (
                -float(by_id[m]["score"]),
                -int(by_id[m]["pinned"]),
                -(by_id[m]["last_reinforced_at"] or 0),
                m,
            ),
        )[0]
        sims_m = pairwise(np.stack([vec_of[m] for m in g])) if vec_of else None
        evidence = {
            "similarities": sims_m,
            "survivor_id": survivor,
            "agent": by_id[survivor]["agent"],
            "same_prefix": len(
                {" ".join(by_id[m]["text"].lower().split())[: cs.rule_prefix_chars] for m in g}
            )
            == 1,
            "scores": [float(by_id[m]["score"]) for m in g],
        }
        flag(evidence, [str(by_id[m]["text"]) for m in g], str(by_id[survivor]["text"]))
        fp = fingerprint("merge", "rule", [[m, content_sha(by_id[m]["text"])] for m in g])
        out.append(Candidate("merge", "rule", g, by_id[survivor]["text"], evidence, fp))
    return out, stats


def archive_candidates(
    conn: Connection, settings, now: float, malformed: list | None = None
) -> tuple[list[Candidate], dict]:
    """Active memories idle past the archive window; never pinned or core."""
    cs = settings.curator
    q = conn.curator_queries
    stale = q.idle_memory_count(now - cs.stale_days * DAY, now - cs.archive_days * DAY)
    rows = q.idle_memories(now - cs.archive_days * DAY)
    out = []
    for r in rows:
        with _skip(malformed, "memory", r):
            at = _float(r["last"])
            idle = round((now - at) / DAY, 1)
            out.append(
                Candidate(
                    "archive",
                    "memory",
                    [int(r["id"])],
                    None,
                    {"idle_days": idle, "archive_days": cs.archive_days, "last_activity": at},
                    fingerprint("archive", "memory", [int(r["id"]), round(at, 3)]),
                )
            )
    return out, {"stale": int(stale)}


def promote_candidates(conn: Connection, settings, malformed: list | None = None) -> list[Candidate]:
    """Learnings and discoveries reinforced repeatedly, not yet a rule."""
    cs = settings.curator
    cats = tuple(cs.promote_categories)
    if not cats:
        return []
    rows = conn.curator_queries.promotable_memories(cats, int(cs.promote_min_reinforcements))
    out = []
    for r in rows:
        with _skip(malformed, "memory", r):
            out.append(
                Candidate(
                    "promote",
                    "memory",
                    [int(r["id"])],
                    _str(r["content"]),
                    {
                        "reinforcements": _int(r["access_count"]),
                        "category": r["category"],
                        "agent": _str(r["agent"]),
                        "rule_score": cs.promote_rule_score,
                    },
                    fingerprint("promote", "memory", [int(r["id"]), content_sha(_str(r["content"]))]),
                )
            )
    return out


def retire_candidates(
    conn: Connection, settings, now: float, malformed: list | None = None
) -> list[Candidate]:
    """Dormant rules unreinforced past the retire window; never pinned."""
    cs = settings.curator
    rows = conn.curator_queries.dormant_rules(now - cs.retire_days * DAY)
    out = []
    for r in rows:
        with _skip(malformed, "rule", r):
            at, score = _float(r["last"]), _float(r["score"])
            out.append(
                Candidate(
                    "retire",
                    "rule",
                    [int(r["id"])],
                    None,
                    {"idle_days": round((now - at) / DAY, 1), "score": score, "retire_days": cs.retire_days},
                    fingerprint("retire", "rule", [int(r["id"]), round(at, 3)]),
                )
            )
    return out
