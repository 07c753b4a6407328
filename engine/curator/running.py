"""A curator run (`eng.curator.run`): scan, dedup against the queue, record each proposal's
members as they are, queue them in one write, auto-apply what the settings name, write the report.
"""

from __future__ import annotations

import builtins
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from engine.curator import apply as curator_apply
from engine.curator import report as curator_report
from engine.curator import state as curator_state
from engine.curator.enqueue import dedup, insert_proposal
from engine.curator.scan import scan
from engine.curator.types import PROPOSAL_KINDS, CuratorRun, Proposal
from engine.errors import InvalidInput
from engine.storage.port import Connection

if TYPE_CHECKING:
    from engine.curator.service import Curator


def run(curator: Curator, dry_run: bool = False, progress=None, use_model: bool | None = None) -> CuratorRun:
    """Scan and queue proposals. Incremental after the first run: only memories added or edited
    since the last run's watermark are compared (against every mergeable memory).
    `use_model`: compare rules by meaning (True waits for the model; None uses it if loaded).
    `progress(stage, done, total)` is called as it goes. A dry run is the same write rolled back
    (the store's dry run): nothing stays, no report is written, nothing is auto-applied."""
    store, clock = curator.ctx.store, curator.ctx.clock
    started = clock.now()
    t0 = time.perf_counter()
    prev = store.query(lambda c: c.curator_queries.latest_run(finished=True))
    embedder = curator.ctx.embedder
    emb = embedder.require() if use_model else (embedder.get() if use_model is None else None)
    with store.reading() as conn:
        res = scan(
            conn,
            curator.ctx.settings,
            started,
            since=None if prev is None else prev["started_at"],
            watermark=None if prev is None else prev["watermark"],
            embedder=emb,
            reads=store.curator,
            vectors=curator.ctx.vectors.backend,
            progress=progress,
        )
        t = time.perf_counter()
        fresh, updates, skipped = dedup(conn, curator.ctx.vectors.backend, res.candidates)
        # Read in the scan's snapshot: a change before the write is caught at approval too.
        h, mark = curator_state.hasher(), curator_state.audit_mark(conn)
        todo = [*fresh, *(c for _, c in updates)]
        for kind in ("memory", "rule"):  # batched: thousands of archive proposals
            mine = [c for c in todo if c.target_kind == kind]
            states = curator_state.member_state(conn, kind, [m for c in mine for m in c.members], h)
            for c in mine:
                c.evidence["member_state"] = {str(m): states[str(m)] for m in c.members}
                c.evidence["audit_mark"] = mark
        res.timings["dedup"] = round(time.perf_counter() - t, 4)
    counts = dict(res.counts)
    counts["proposed"] = {k: sum(1 for c in fresh if c.kind == k) for k in PROPOSAL_KINDS}
    counts["updated"] = len(updates)
    counts["skipped"] = skipped
    finished = clock.now()
    res.timings["total"] = round(time.perf_counter() - t0, 4)
    folder = None if dry_run else curator_report.report_dir_for(curator.ctx.path, started)

    def write(conn: Connection) -> tuple[int, builtins.list[int]]:
        doc = {**counts, "timings": res.timings}
        run_id = conn.curator_runs.insert(started, finished, json.dumps(doc), str(folder), res.watermark)
        ids = [insert_proposal(conn, curator.ctx.actor, c, run_id, started) for c in fresh]
        for pid, c in updates:
            conn.proposals.regrow(
                pid,
                json.dumps(c.members),
                c.survivor_text,
                json.dumps(c.evidence),
                c.fingerprint,
                run_id,
            )
            curator_apply.record(
                conn,
                curator.ctx.actor,
                pid,
                "proposal-updated",
                started,
                "new near-duplicates",
                {"members": c.members},
            )
        curator_apply.record(
            conn,
            curator.ctx.actor,
            run_id,
            "curate-run",
            started,
            "",
            {
                "proposed": counts["proposed"],
                "updated": len(updates),
                "skipped": skipped,
                "compared": counts.get("compared"),
            },
            target_kind="curator_run",
        )
        return run_id, ids

    if dry_run:
        store.dry_run(write)
        props = [
            Proposal(0, c.kind, c.target_kind, "pending", c.members, c.survivor_text, c.evidence, started)
            for c in fresh
        ]
        return CuratorRun(None, True, started, finished, counts, res.timings, props)
    run_id, ids = store.write(write)
    run = CuratorRun(
        run_id, False, started, finished, counts, res.timings, curator.queue.proposals(ids), str(folder)
    )
    for pid in [p.id for p in run.proposals if p.kind in tuple(curator.ctx.settings.curator.auto_apply)]:
        try:
            curator.approve(pid, reason="auto-apply policy")
            run.auto_applied.append(pid)
        except InvalidInput:
            pass
    if run.auto_applied:
        run.proposals = curator.queue.proposals(ids)
    curator_report.write_report(Path(str(folder)), run, curator.queue.member_texts(run.proposals))
    return run
