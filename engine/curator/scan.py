"""The curator's detectors: pure reads that find what to propose. Nothing here writes.

Near-duplicate memories are found with one batched matrix product per agent: the new or changed
memories since the last run (its watermark) against every mergeable memory of that agent. A
per-memory KNN query would cost ~70 ms each at 100k memories; the product costs ~0.5 s for 1,000.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import dataclass, field

import numpy as np

from engine.curator.state import float_ as _float
from engine.curator.state import int_ as _int
from engine.curator.state import skip as _skip
from engine.curator.state import str_ as _str
from engine.curator.types import ProposalKind, TargetKind
from engine.sql import marks
from engine.storage.curator import CuratorReads
from engine.storage.indexes import VectorStore

DAY = 86400.0
DIM = 384  # all-MiniLM-L6-v2: the width of an empty matrix
BLOCK = 256  # rows of new vectors per matrix product (bounds memory: 256 x N floats)


@dataclass
class Candidate:
    """A would-be proposal, before it has an id."""

    kind: ProposalKind
    target_kind: TargetKind
    members: list[int]
    survivor_text: str | None
    evidence: dict
    fingerprint: str


@dataclass
class ScanResult:
    candidates: list[Candidate] = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    watermark: int = 0


def fingerprint(kind: str, target_kind: str, parts: list) -> str:
    """Same kind, same members, same member content -> same fingerprint (so a rejected proposal is
    not proposed again unless its members change)."""
    raw = json.dumps([kind, target_kind, parts], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class _Union:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        p = self.parent.setdefault(x, x)
        while p != self.parent.setdefault(p, p):
            self.parent[x] = self.parent[p]
            x, p = p, self.parent[p]
        return p

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def groups(self) -> list[list[int]]:
        out: dict[int, list[int]] = {}
        for x in self.parent:
            out.setdefault(self.find(x), []).append(x)
        return [sorted(g) for g in out.values() if len(g) > 1]


def load_vectors(
    conn, reads: CuratorReads | None, vectors: VectorStore
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(ids, vectors, row, agents) of every mergeable memory (core/active, not absorbed, embedded):
    the vector of ids[i] is vectors[row[i]] (no copy of the whole matrix is made to reorder it).
    `reads` gives the whole vector table the fast way (None, or its None: the vector store's scan)."""
    empty: tuple[np.ndarray, np.ndarray, np.ndarray, list[str]] = (
        np.zeros(0, dtype=np.int64),
        np.zeros((0, DIM), dtype=np.float32),
        np.zeros(0, dtype=np.int64),
        [],
    )
    meta = conn.execute(
        "SELECT id, agent FROM memories WHERE tier IN ('core', 'active')"
        " AND absorbed_into IS NULL AND embedded = 1 ORDER BY id"
    ).fetchall()
    if not meta:
        return empty
    want = np.fromiter((r[0] for r in meta), dtype=np.int64, count=len(meta))
    agents = [r[1] for r in meta]
    got = reads.all_vectors(conn) if reads is not None else None
    if got is not None:
        vids, vmat = got
        order = np.argsort(vids, kind="stable")
        pos = np.searchsorted(vids[order], want)
        pos = np.minimum(pos, len(vids) - 1)
        ok = vids[order][pos] == want
        keep = np.nonzero(ok)[0]
        return want[keep], vmat, order[pos[keep]], [agents[i] for i in keep.tolist()]
    agent_of = {
        int(r[0]): r[1]
        for r in conn.execute(
            "SELECT id, agent FROM memories WHERE tier IN ('core', 'active') AND absorbed_into IS NULL"
        )
    }
    rows = sorted((int(r[0]), r[1]) for batch in vectors.scan(conn) for r in batch if int(r[0]) in agent_of)
    if not rows:
        return empty
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    return ids, mat, np.arange(len(rows)), [agent_of[r[0]] for r in rows]


def pairwise(mat: np.ndarray) -> list[list[float]]:
    sims = mat @ mat.T
    return [[round(float(x), 4) for x in row] for row in sims]


def memory_clusters(
    conn,
    settings,
    new_ids: set[int] | None,
    progress=None,
    malformed: list | None = None,
    *,
    reads: CuratorReads | None,
    vectors: VectorStore,
) -> tuple[list[Candidate], dict]:
    """Near-duplicate clusters of memories touching `new_ids` (None: compare everything)."""
    cs = settings.curator
    thr = float(cs.merge_threshold)
    ids, mat, where, agents = load_vectors(conn, reads, vectors)
    stats = {"vectors": int(len(ids)), "compared": 0}
    if len(ids) == 0:
        return [], stats
    names, agent_of = np.unique(np.asarray(agents, dtype=object).astype(str), return_inverse=True)
    is_new = (
        None if new_ids is None else np.isin(ids, np.fromiter(new_ids, dtype=np.int64, count=len(new_ids)))
    )
    uf = _Union()
    for a in range(len(names)):
        rows_arr = np.nonzero(agent_of == a)[0]
        if is_new is None:
            probe = np.arange(len(rows_arr))
        else:
            probe = np.nonzero(is_new[rows_arr])[0]
            if len(probe) == 0:
                continue
        sub = mat[where[rows_arr]]  # this agent's vectors, contiguous
        stats["compared"] += int(len(probe))
        for start in range(0, len(probe), BLOCK):
            blk = probe[start : start + BLOCK]
            # A full run compares each block only with the rows after it (each pair once).
            off = int(blk[0]) if new_ids is None else 0
            sims = sub[blk] @ sub[off:].T
            sims[np.arange(len(blk)), blk - off] = -1.0  # a memory is not its own duplicate
            hit_r, hit_c = np.nonzero(sims >= thr)
            for r, c in zip(hit_r.tolist(), hit_c.tolist(), strict=True):
                uf.union(int(ids[rows_arr[blk[r]]]), int(ids[rows_arr[c + off]]))
            if progress:
                progress("compare", min(start + BLOCK, len(probe)), len(probe))
    groups = uf.groups()
    if not groups:
        return [], stats
    members_rows = _memory_rows(conn, [m for g in groups for m in g])
    wanted = np.asarray(sorted({m for g in groups for m in g}), dtype=np.int64)
    index = dict(
        zip(wanted.tolist(), where[np.searchsorted(ids, wanted)].tolist(), strict=True)
    )  # ids are sorted
    out = []
    for g in groups:
        with _skip(malformed, "memory", {"id": g[0]}):
            for chunk in _split(g, members_rows, cs.max_cluster):
                vecs = mat[[index[m] for m in chunk]]
                out.append(merge_candidate(chunk, members_rows, vecs))
    return out, stats


def _split(group: list[int], rows: dict, cap: int) -> list[list[int]]:
    """Keep proposals reviewable: the strongest `cap` members form one proposal."""
    if len(group) <= cap:
        return [group]
    ranked = sorted(group, key=lambda m: _strength_key(rows[m]))
    return [sorted(ranked[i : i + cap]) for i in range(0, len(ranked), cap) if len(ranked[i : i + cap]) > 1]


def _strength_key(r) -> tuple:
    """Strongest first: pinned, core, importance, strength, accesses, then the oldest id."""
    return (
        -int(r["pinned"]),
        r["tier"] != "core",
        -float(r["importance"]),
        -float(r["anchor_strength"]),
        -int(r["access_count"]),
        int(r["id"]),
    )


def _memory_rows(conn, ids: list[int]) -> dict[int, object]:
    out = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for r in conn.execute(f"SELECT * FROM memories WHERE id IN ({marks(len(chunk))})", chunk):
            out[int(r["id"])] = r
    return out


def merge_candidate(members: list[int], rows: dict, vecs: np.ndarray) -> Candidate:
    survivor = sorted(members, key=lambda m: _strength_key(rows[m]))[0]
    sims = pairwise(vecs)
    evidence = {
        "similarities": sims,
        "survivor_id": survivor,
        "agent": rows[survivor]["agent"],
        "min_similarity": round(min(min(r[:i] + r[i + 1 :]) for i, r in enumerate(sims)), 4),
    }
    fp = fingerprint("merge", "memory", [[m, _sha(rows[m]["content"])] for m in members])
    return Candidate("merge", "memory", members, rows[survivor]["content"], evidence, fp)


def rule_clusters(conn, settings, embedder, malformed: list | None = None) -> tuple[list[Candidate], dict]:
    """Near-duplicate rules of one agent: the same first N characters, or cosine >= threshold."""
    cs = settings.curator
    rows = []
    for r in conn.execute(
        "SELECT * FROM rules WHERE status != 'retired' AND absorbed_into IS NULL ORDER BY id"
    ):
        with _skip(malformed, "rule", r):  # text a string, score finite, agent text: or skipped
            if not isinstance(r["text"], str) or not isinstance(r["agent"], str):
                raise TypeError("text or agent is not text")
            _float(r["score"]), _float(r["last_reinforced_at"] or 0), _int(r["pinned"])
            rows.append(r)
    stats = {"rules": len(rows), "rules_by_meaning": embedder is not None}
    if len(rows) < 2:
        return [], stats
    uf = _Union()
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
        fp = fingerprint("merge", "rule", [[m, _sha(by_id[m]["text"])] for m in g])
        out.append(Candidate("merge", "rule", g, by_id[survivor]["text"], evidence, fp))
    return out, stats


def archive_candidates(
    conn, settings, now: float, malformed: list | None = None
) -> tuple[list[Candidate], dict]:
    """Active memories idle past the archive window; never pinned or core."""
    cs = settings.curator
    last = "max(created_at, coalesce(last_accessed_at, 0), last_reinforced_at)"
    stale = conn.execute(
        f"SELECT count(*) FROM memories WHERE tier = 'active' AND pinned = 0 AND absorbed_into IS NULL"
        f" AND {last} < ? AND {last} >= ?",
        (now - cs.stale_days * DAY, now - cs.archive_days * DAY),
    ).fetchone()[0]
    rows = conn.execute(
        f"SELECT id, {last} AS last FROM memories WHERE tier = 'active' AND pinned = 0"
        f" AND absorbed_into IS NULL AND {last} < ? ORDER BY id",
        (now - cs.archive_days * DAY,),
    ).fetchall()
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


def promote_candidates(conn, settings, malformed: list | None = None) -> list[Candidate]:
    """Learnings and discoveries reinforced repeatedly, not yet a rule."""
    cs = settings.curator
    cats = tuple(cs.promote_categories)
    if not cats:
        return []
    rows = conn.execute(
        f"SELECT * FROM memories WHERE category IN ({marks(len(cats))}) AND tier != 'archived'"
        " AND absorbed_into IS NULL AND access_count >= ? AND NOT EXISTS (SELECT 1 FROM rules"
        " WHERE json_valid(rules.metadata) AND json_extract(rules.metadata, '$.promoted_from') = memories.id)"
        " ORDER BY id",
        (*cats, int(cs.promote_min_reinforcements)),
    ).fetchall()
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
                    fingerprint("promote", "memory", [int(r["id"]), _sha(_str(r["content"]))]),
                )
            )
    return out


def retire_candidates(conn, settings, now: float, malformed: list | None = None) -> list[Candidate]:
    """Dormant rules unreinforced past the retire window; never pinned."""
    cs = settings.curator
    last = "coalesce(last_reinforced_at, created_at)"
    rows = conn.execute(
        f"SELECT *, {last} AS last FROM rules WHERE status = 'dormant' AND pinned = 0 AND {last} < ?"
        " ORDER BY id",
        (now - cs.retire_days * DAY,),
    ).fetchall()
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


def changed_since(conn, since: float | None, watermark: int | None) -> set[int] | None:
    """Memories new since the watermark, or edited/restored since the last run (None: all)."""
    if watermark is None or since is None:
        return None
    new = {int(r[0]) for r in conn.execute("SELECT id FROM memories WHERE id > ?", (watermark,))}
    for r in conn.execute(
        "SELECT target_id FROM audit WHERE at >= ? AND target_kind = 'memory'"
        " AND action IN ('edit', 'restore')",
        (since,),
    ):
        with contextlib.suppress(ValueError):
            new.add(int(r[0]))
    return new


def scan(
    conn,
    settings,
    now: float,
    *,
    since: float | None,
    watermark: int | None,
    embedder,
    reads: CuratorReads | None,
    vectors: VectorStore,
    progress=None,
) -> ScanResult:
    """Every detector, in one read snapshot."""
    out = ScanResult()
    t = time.perf_counter()
    out.watermark = int(conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0])
    new_ids = changed_since(conn, since, watermark)
    out.counts["incremental"] = new_ids is not None
    out.counts["new_or_changed"] = None if new_ids is None else len(new_ids)
    malformed: list[str] = []
    if new_ids is None or new_ids:
        mem, stats = memory_clusters(
            conn, settings, new_ids, progress, malformed, reads=reads, vectors=vectors
        )
    else:
        mem, stats = [], {"vectors": 0, "compared": 0}
    out.counts.update(stats)
    out.timings["merge_memories"] = round(time.perf_counter() - t, 4)
    t = time.perf_counter()
    rules, rstats = rule_clusters(conn, settings, embedder, malformed)
    out.counts.update(rstats)
    out.timings["merge_rules"] = round(time.perf_counter() - t, 4)
    t = time.perf_counter()
    arch, astats = archive_candidates(conn, settings, now, malformed)
    out.counts.update(astats)
    out.timings["archive"] = round(time.perf_counter() - t, 4)
    t = time.perf_counter()
    prom = promote_candidates(conn, settings, malformed)
    ret = retire_candidates(conn, settings, now, malformed)
    out.timings["promote_retire"] = round(time.perf_counter() - t, 4)
    out.candidates = mem + rules + arch + prom + ret
    # Skipped rows, named for the report (`memconsole doctor` finds and explains them).
    out.counts["malformed"] = len(malformed)
    out.counts["malformed_rows"] = malformed[:50]
    if progress:
        progress("scan", 1, 1)
    return out
