"""Near-duplicate memories: one batched matrix product per agent (new or changed memories against
every mergeable memory of that agent), clusters kept reviewable, and the merge candidate with its
survivor (the strongest member)."""

from __future__ import annotations

import numpy as np

from engine.curator.candidates import Candidate, content_sha, fingerprint
from engine.curator.risky import flag
from engine.curator.state import skip as _skip
from engine.curator.union_find import UnionFind
from engine.storage.curator import CuratorReads
from engine.storage.indexes import VectorStore
from engine.storage.port import Connection

DIM = 384  # all-MiniLM-L6-v2: the width of an empty matrix
BLOCK = 256  # rows of new vectors per matrix product (bounds memory: 256 x N floats)


def load_vectors(
    conn: Connection, reads: CuratorReads | None, vectors: VectorStore
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
    meta = conn.curator_queries.mergeable_memories()
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
    agent_of = conn.curator_queries.unabsorbed_memory_agents()
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
    conn: Connection,
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
    uf = UnionFind()
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
    members_rows = conn.curator_queries.memory_rows([m for g in groups for m in g])
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


def merge_candidate(members: list[int], rows: dict, vecs: np.ndarray) -> Candidate:
    survivor = sorted(members, key=lambda m: _strength_key(rows[m]))[0]
    sims = pairwise(vecs)
    evidence = {
        "similarities": sims,
        "survivor_id": survivor,
        "agent": rows[survivor]["agent"],
        "min_similarity": round(min(min(r[:i] + r[i + 1 :]) for i, r in enumerate(sims)), 4),
    }
    # Risky: members differ only in numbers, or the survivor drops a negation, a condition, a
    # number or a name another member carries (engine/curator/risky.py).
    flag(evidence, [str(rows[m]["content"]) for m in members], str(rows[survivor]["content"]))
    fp = fingerprint("merge", "memory", [[m, content_sha(rows[m]["content"])] for m in members])
    return Candidate("merge", "memory", members, rows[survivor]["content"], evidence, fp)
