"""The curator's scan: every detector (curator/memory_merge.py, curator/detectors.py) in one read
snapshot, over what changed since the last run. Pure reads that find what to propose. Nothing here
writes.

Near-duplicate memories are found with one batched matrix product per agent: the new or changed
memories since the last run (its watermark) against every mergeable memory of that agent. A
per-memory KNN query would cost ~70 ms each at 100k memories; the product costs ~0.5 s for 1,000.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

from engine.curator.candidates import Candidate
from engine.curator.detectors import archive_candidates, promote_candidates, retire_candidates, rule_clusters
from engine.curator.memory_merge import load_vectors as load_vectors  # re-exported (tests)
from engine.curator.memory_merge import memory_clusters
from engine.storage.curator import CuratorReads
from engine.storage.indexes import VectorStore
from engine.storage.port import Connection


@dataclass
class ScanResult:
    candidates: list[Candidate] = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    watermark: int = 0


def changed_since(conn: Connection, since: float | None, watermark: int | None) -> set[int] | None:
    """Memories new since the watermark, or edited/restored since the last run (None: all)."""
    if watermark is None or since is None:
        return None
    new = set(conn.curator_queries.memory_ids_after(watermark))
    for target in conn.curator_queries.edited_memory_targets(since):
        with contextlib.suppress(ValueError):
            new.add(int(target))
    return new


def scan(
    conn: Connection,
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
    out.watermark = conn.curator_queries.max_memory_id()
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
