"""Queueing a scan's candidates: drop what was proposed before (any status), grow a pending merge
that gained members, and insert a new pending proposal with its audit record."""

from __future__ import annotations

import json

import numpy as np

from engine.curator import apply as curator_apply
from engine.curator import state as curator_state
from engine.curator.candidates import Candidate
from engine.curator.memory_merge import merge_candidate
from engine.storage.indexes import VectorStore
from engine.storage.port import Connection


def insert_proposal(conn: Connection, actor: str, c: Candidate, run_id: int, now: float) -> int:
    pid = conn.proposals.insert_pending(
        c.kind,
        c.target_kind,
        json.dumps(c.members),
        c.survivor_text,
        json.dumps(c.evidence),
        c.fingerprint,
        run_id,
        now,
    )
    curator_apply.record(
        conn,
        actor,
        pid,
        "proposal-created",
        now,
        "",
        {"kind": c.kind, "target_kind": c.target_kind, "members": c.members},
    )
    return pid


def dedup(conn: Connection, backend: VectorStore, cands: list[Candidate]):
    """Drop what was proposed before (any status); grow a pending merge that gained members."""
    seen = conn.curator_queries.fingerprints()
    pending_of: dict[int, int] = {}
    pending_members: dict[int, list[int]] = {}
    for pid, members in conn.curator_queries.pending_memory_merges():
        pending_members[pid] = curator_state.parse_members(members)
        for m in pending_members[pid]:
            pending_of.setdefault(m, pid)
    fresh: list[Candidate] = []
    updates: list[tuple[int, Candidate]] = []
    skipped = 0
    for c in cands:
        if c.fingerprint in seen:
            skipped += 1
            continue
        hit = (
            next((pending_of[m] for m in c.members if m in pending_of), None)
            if c.kind == "merge" and c.target_kind == "memory"
            else None
        )
        if hit is not None:
            grown = grown_merge(conn, backend, sorted(set(c.members) | set(pending_members[hit])))
            if grown is None or grown.fingerprint in seen:
                skipped += 1
                continue
            c = grown
            updates.append((hit, c))
        else:
            fresh.append(c)
        seen.add(c.fingerprint)
    return fresh, updates, skipped


def grown_merge(conn: Connection, backend: VectorStore, members: list[int]) -> Candidate | None:
    rows = conn.curator_queries.live_memory_rows(members)
    vecs = {int(r[0]): np.frombuffer(r[1], dtype=np.float32) for r in backend.entries(conn, members)}
    keep = [m for m in members if m in rows and m in vecs]
    if len(keep) < 2:
        return None
    return merge_candidate(keep, rows, np.stack([vecs[m] for m in keep]))
