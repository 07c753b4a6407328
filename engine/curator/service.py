"""The curator: a deterministic, offline pass that only proposes (merge, archive, promote, retire),
and the approval queue an operator works through (approve, optionally editing the text; reject
with a reason; undo an applied proposal exactly). Nothing changes a memory or a rule until a
proposal is approved, unless the settings name a kind in `curator.auto_apply` (off by default).

Queue states: pending -> approved | rejected; approved -> applied -> undone.
"""

from __future__ import annotations

import builtins
import json
import time
from pathlib import Path

import numpy as np

from engine.context import Context
from engine.curator import apply as curator_apply
from engine.curator import report as curator_report
from engine.curator import state as curator_state
from engine.curator.scan import Candidate, merge_candidate, scan
from engine.curator.types import (
    PROPOSAL_KINDS,
    PROPOSAL_STATUSES,
    CuratorRun,
    Proposal,
    ProposalDetail,
    ProposalMember,
)
from engine.errors import InvalidInput, NotFound
from engine.memories import MemoriesService
from engine.memory_input import check_text
from engine.sql import chunked, marks
from engine.types import load_json


def row_to_proposal(r) -> Proposal:
    return Proposal(
        id=r["id"],
        kind=r["kind"],
        target_kind=r["target_kind"],
        status=r["status"],
        members=curator_state.parse_members(r["members"]),
        survivor_text=r["survivor_text"],
        evidence=_dict(load_json(r["evidence"])),
        created_at=r["created_at"],
        run_id=r["run_id"],
        decided_at=r["decided_at"],
        decided_by=r["decided_by"],
        reason=r["reason"],
        applied_at=r["applied_at"],
        undone_at=r["undone_at"],
        result_id=r["result_id"],
    )


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _text(v) -> str:
    return v if isinstance(v, str) else ("" if v is None else str(v))


def _num(fn, arg) -> float:
    """A member's strength or score for display; 0.0 when the stored row holds something odd."""
    try:
        v = round(float(fn(arg)), 4)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return v if v == v and abs(v) != float("inf") else 0.0


def _run_from_row(r, proposals: list[Proposal]) -> CuratorRun:
    doc = load_json(r["counts"])
    timings = doc.pop("timings", {})
    auto = doc.pop("auto_applied", [])
    return CuratorRun(
        id=r["id"],
        dry_run=bool(r["dry_run"]),
        started_at=r["started_at"],
        finished_at=r["finished_at"] or r["started_at"],
        counts=doc,
        timings=timings,
        proposals=proposals,
        report_dir=r["report_dir"],
        auto_applied=auto,
    )


class Curator:
    """`eng.curator`: runs the scan, keeps the queue, applies and undoes decisions exactly."""

    def __init__(self, ctx: Context, memories: MemoriesService) -> None:
        self.ctx = ctx
        self.memories = memories  # member strengths for display and merges

    # -- running -------------------------------------------------------------------------------------
    def run(self, dry_run: bool = False, progress=None, use_model: bool | None = None) -> CuratorRun:
        """Scan and queue proposals. Incremental after the first run: only memories added or edited
        since the last run's watermark are compared (against every mergeable memory).
        `use_model`: compare rules by meaning (True waits for the model; None uses it if loaded).
        `progress(stage, done, total)` is called as it goes. A dry run is the same write rolled back
        (the store's dry run): nothing stays, no report is written, nothing is auto-applied."""
        store, clock = self.ctx.store, self.ctx.clock
        started = clock.now()
        t0 = time.perf_counter()
        prev = store.read_one(
            "SELECT * FROM curator_runs WHERE dry_run = 0 AND finished_at IS NOT NULL"
            " ORDER BY id DESC LIMIT 1"
        )
        embedder = self.ctx.embedder
        emb = embedder.require() if use_model else (embedder.get() if use_model is None else None)
        with store.reading() as conn:
            res = scan(
                conn,
                self.ctx.settings,
                started,
                since=None if prev is None else prev["started_at"],
                watermark=None if prev is None else prev["watermark"],
                embedder=emb,
                reads=store.curator,
                vectors=self.ctx.vectors.backend,
                progress=progress,
            )
            t = time.perf_counter()
            fresh, updates, skipped = self._dedup(conn, res.candidates)
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
        folder = None if dry_run else curator_report.report_dir_for(self.ctx.path, started)

        def write(conn):
            doc = {**counts, "timings": res.timings}
            run_id = int(
                conn.execute(
                    "INSERT INTO curator_runs(started_at, finished_at, dry_run, counts, report_dir,"
                    " watermark) VALUES (?,?,0,?,?,?) RETURNING id",
                    (started, finished, json.dumps(doc), str(folder), res.watermark),
                ).fetchall()[0][0]
            )
            ids = [self._insert_proposal(conn, c, run_id, started) for c in fresh]
            for pid, c in updates:
                conn.execute(
                    "UPDATE proposals SET members = ?, survivor_text = ?, evidence = ?,"
                    " fingerprint = ?, run_id = ? WHERE id = ? AND status = 'pending'",
                    (
                        json.dumps(c.members),
                        c.survivor_text,
                        json.dumps(c.evidence),
                        c.fingerprint,
                        run_id,
                        pid,
                    ),
                )
                curator_apply.record(
                    conn,
                    self.ctx.actor,
                    pid,
                    "proposal-updated",
                    started,
                    "new near-duplicates",
                    {"members": c.members},
                )
            curator_apply.record(
                conn,
                self.ctx.actor,
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
            run_id, False, started, finished, counts, res.timings, self._proposals(ids), str(folder)
        )
        for pid in [p.id for p in run.proposals if p.kind in tuple(self.ctx.settings.curator.auto_apply)]:
            try:
                self.approve(pid, reason="auto-apply policy")
                run.auto_applied.append(pid)
            except InvalidInput:
                pass
        if run.auto_applied:
            run.proposals = self._proposals(ids)
        curator_report.write_report(Path(str(folder)), run, self._member_texts(run.proposals))
        return run

    def _insert_proposal(self, conn, c: Candidate, run_id: int, now: float) -> int:
        pid = int(
            conn.execute(
                "INSERT INTO proposals(kind, target_kind, status, members, survivor_text, evidence,"
                " fingerprint, run_id, created_at) VALUES (?,?,'pending',?,?,?,?,?,?) RETURNING id",
                (
                    c.kind,
                    c.target_kind,
                    json.dumps(c.members),
                    c.survivor_text,
                    json.dumps(c.evidence),
                    c.fingerprint,
                    run_id,
                    now,
                ),
            ).fetchall()[0][0]
        )
        curator_apply.record(
            conn,
            self.ctx.actor,
            pid,
            "proposal-created",
            now,
            "",
            {"kind": c.kind, "target_kind": c.target_kind, "members": c.members},
        )
        return pid

    def _dedup(self, conn, cands: builtins.list[Candidate]):
        """Drop what was proposed before (any status); grow a pending merge that gained members."""
        seen = {r[0] for r in conn.execute("SELECT fingerprint FROM proposals")}
        pending_of: dict[int, int] = {}
        pending_members: dict[int, list[int]] = {}
        for r in conn.execute(
            "SELECT id, members FROM proposals WHERE status = 'pending' AND kind = 'merge'"
            " AND target_kind = 'memory'"
        ):
            pending_members[r[0]] = curator_state.parse_members(r[1])
            for m in pending_members[r[0]]:
                pending_of.setdefault(m, r[0])
        fresh: builtins.list[Candidate] = []
        updates: builtins.list[tuple[int, Candidate]] = []
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
                grown = self._grown(conn, sorted(set(c.members) | set(pending_members[hit])))
                if grown is None or grown.fingerprint in seen:
                    skipped += 1
                    continue
                c = grown
                updates.append((hit, c))
            else:
                fresh.append(c)
            seen.add(c.fingerprint)
        return fresh, updates, skipped

    def _grown(self, conn, members: builtins.list[int]) -> Candidate | None:
        rows = {
            int(r["id"]): r
            for part in chunked(members)
            for r in conn.execute(
                f"SELECT * FROM memories WHERE id IN ({marks(len(part))}) AND tier != 'archived'"
                " AND absorbed_into IS NULL",
                part,
            )
        }
        vecs = {
            int(r[0]): np.frombuffer(r[1], dtype=np.float32)
            for r in self.ctx.vectors.backend.entries(conn, members)
        }
        keep = [m for m in members if m in rows and m in vecs]
        if len(keep) < 2:
            return None
        return merge_candidate(keep, rows, np.stack([vecs[m] for m in keep]))

    def _member_texts(self, proposals: builtins.list[Proposal]) -> dict:
        out = {}
        for p in proposals:
            table, col = ("memories", "content") if p.target_kind == "memory" else ("rules", "text")
            for m in p.members:
                r = self.ctx.store.read_one(f"SELECT {col} FROM {table} WHERE id = ?", (m,))
                out[(p.target_kind, m)] = r[0] if r else ""
        return out

    # -- reading the queue ------------------------------------------------------------------------------
    def _proposals(self, ids: builtins.list[int]) -> builtins.list[Proposal]:
        if not ids:
            return []
        out = []
        for chunk in chunked(ids):
            out += [
                row_to_proposal(r)
                for r in self.ctx.store.read(
                    f"SELECT * FROM proposals WHERE id IN ({marks(len(chunk))}) ORDER BY id", tuple(chunk)
                )
            ]
        return out

    def list(
        self, status: str | None = None, kind: str | None = None, limit: int = 1000
    ) -> builtins.list[Proposal]:
        if status is not None and status not in PROPOSAL_STATUSES:
            raise InvalidInput(f"unknown status {status!r}; use one of {', '.join(PROPOSAL_STATUSES)}")
        if kind is not None and kind not in PROPOSAL_KINDS:
            raise InvalidInput(f"unknown kind {kind!r}; use one of {', '.join(PROPOSAL_KINDS)}")
        where: builtins.list[str] = ["1=1"]
        params: builtins.list[object] = []
        if status:
            where.append("status = ?")
            params.append(status)
        if kind:
            where.append("kind = ?")
            params.append(kind)
        rows = self.ctx.store.read(
            f"SELECT * FROM proposals WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?",
            (*params, int(limit)),
        )
        return [row_to_proposal(r) for r in rows]

    def get(self, proposal_id: int) -> ProposalDetail:
        p = row_to_proposal(self._proposal_row(proposal_id))
        members: builtins.list[ProposalMember] = []
        vecs = {}
        for m in p.members:
            if p.target_kind == "memory":
                r = self.ctx.store.read_one("SELECT * FROM memories WHERE id = ?", (m,))
                v = self.ctx.vectors.vector_of(m) if r is not None else None
                if v is not None:
                    vecs[m] = v
                members.append(
                    ProposalMember(
                        m,
                        "memory",
                        _text(r["content"]),
                        _text(r["tier"]),
                        _num(self.memories.current_strength, r),
                        _text(r["agent"]),
                    )
                    if r
                    else ProposalMember(m, "memory", "", "gone", 0.0, "", exists=False)
                )
            else:
                r = self.ctx.store.read_one("SELECT * FROM rules WHERE id = ?", (m,))
                members.append(
                    ProposalMember(
                        m,
                        "rule",
                        _text(r["text"]),
                        _text(r["status"]),
                        _num(float, r["score"]),
                        _text(r["agent"]),
                    )
                    if r
                    else ProposalMember(m, "rule", "", "gone", 0.0, "", exists=False)
                )
        sims = p.evidence.get("similarities")
        if not isinstance(sims, list) or len(sims) != len(p.members):
            sims = [
                [
                    round(float(np.dot(vecs[a], vecs[b])), 4) if a in vecs and b in vecs else None
                    for b in p.members
                ]
                for a in p.members
            ]
        sid = p.evidence.get("survivor_id")
        return ProposalDetail(p, members, sims, sid if isinstance(sid, int) else None)

    def _proposal_row(self, proposal_id: int):
        try:
            pid = int(proposal_id)
        except (TypeError, ValueError):
            raise InvalidInput(f"a proposal id is a whole number, not {proposal_id!r}") from None
        r = self.ctx.store.read_one("SELECT * FROM proposals WHERE id = ?", (pid,))
        if r is None:
            raise NotFound(f"no proposal with id {pid}")
        return r

    def runs(self, limit: int = 50) -> builtins.list[CuratorRun]:
        rows = self.ctx.store.read("SELECT * FROM curator_runs ORDER BY id DESC LIMIT ?", (int(limit),))
        return [_run_from_row(r, []) for r in rows]

    def latest_run(self) -> CuratorRun | None:
        """The last real run, with the proposals it made (the Curator pane's report view)."""
        r = self.ctx.store.read_one("SELECT * FROM curator_runs WHERE dry_run = 0 ORDER BY id DESC LIMIT 1")
        if r is None:
            return None
        ids = [
            x[0]
            for x in self.ctx.store.read("SELECT id FROM proposals WHERE run_id = ? ORDER BY id", (r["id"],))
        ]
        return _run_from_row(r, self._proposals(ids))

    def latest_report(self) -> str | None:
        """The Markdown report of the last real run, if its file is still there."""
        run = self.latest_run()
        if run is None or not run.report_dir:
            return None
        f = Path(run.report_dir) / "REPORT.md"
        return f.read_text(encoding="utf-8") if f.exists() else None

    # -- deciding ---------------------------------------------------------------------------------------
    def approve(
        self, proposal_id: int, text: str | None = None, reason: str = "", apply: bool = True
    ) -> Proposal:
        """Approve (optionally editing the survivor / rule text) and, by default, apply at once."""
        r = self._proposal_row(proposal_id)
        if r["status"] != "pending":
            raise InvalidInput(
                f"proposal {r['id']} is {r['status']}; only a pending proposal can be approved"
            )
        if text is not None:
            if r["kind"] not in ("merge", "promote"):
                raise InvalidInput(f"a {r['kind']} proposal has no text to edit")
            text = check_text(text, "text")
        now = self.ctx.clock.now()
        vector = self._vector_for(r, text) if apply else None

        def write(conn):
            cur = conn.execute("SELECT status FROM proposals WHERE id = ?", (r["id"],)).fetchone()
            if cur[0] != "pending":
                raise InvalidInput(f"proposal {r['id']} is {cur[0]}; only a pending proposal can be approved")
            conn.execute(
                "UPDATE proposals SET status = 'approved', decided_at = ?, decided_by = ?, reason = ?,"
                " survivor_text = coalesce(?, survivor_text) WHERE id = ?",
                (now, self.ctx.actor, reason, text, r["id"]),
            )
            curator_apply.record(
                conn,
                self.ctx.actor,
                r["id"],
                "proposal-approved",
                now,
                reason,
                {
                    "kind": r["kind"],
                    "members": curator_state.parse_members(r["members"]),
                    "edited": text is not None,
                },
            )
            if apply:
                self._apply_in(conn, r["id"], now, reason, vector)

        self.ctx.store.write(write)
        return self._proposals([r["id"]])[0]

    def _vector_for(self, r, text: str | None):
        """An edited merge text needs its own vector; compute it before the transaction."""
        if r["kind"] != "merge" or r["target_kind"] != "memory":
            return None
        ev = load_json(r["evidence"])
        base = text if text is not None else r["survivor_text"]
        surv = self.ctx.store.read_one("SELECT content FROM memories WHERE id = ?", (ev.get("survivor_id"),))
        if surv is not None and base == surv[0]:
            return None  # apply copies the survivor's vector
        emb = self.ctx.embedder.get()
        return emb.embed([base])[0] if emb is not None else None

    def _apply_in(self, conn, pid: int, now: float, reason: str, vector) -> None:
        row = conn.execute("SELECT * FROM proposals WHERE id = ?", (pid,)).fetchone()
        ap = curator_apply.Applier(self.ctx, self.memories, conn, row, now, reason)
        result, snapshot = ap.apply(row["survivor_text"], vector)
        conn.execute(
            "UPDATE proposals SET status = 'applied', applied_at = ?, result_id = ?, snapshot = ?"
            " WHERE id = ?",
            (now, result, json.dumps(snapshot, ensure_ascii=False), pid),
        )
        curator_apply.record(
            conn,
            self.ctx.actor,
            pid,
            "proposal-applied",
            now,
            reason,
            {
                "kind": row["kind"],
                "target_kind": row["target_kind"],
                "members": curator_state.parse_members(row["members"]),
                "result_id": result,
            },
        )

    def reject(self, proposal_id: int, reason: str) -> Proposal:
        r = self._proposal_row(proposal_id)
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidInput("a rejection needs a reason")
        if r["status"] not in ("pending", "approved"):
            raise InvalidInput(
                f"proposal {r['id']} is {r['status']}; only a pending or approved proposal can be rejected"
            )
        now = self.ctx.clock.now()

        def write(conn):
            conn.execute(
                "UPDATE proposals SET status = 'rejected', decided_at = ?, decided_by = ?, reason = ?"
                " WHERE id = ?",
                (now, self.ctx.actor, reason, r["id"]),
            )
            curator_apply.record(
                conn,
                self.ctx.actor,
                r["id"],
                "proposal-rejected",
                now,
                reason,
                {"kind": r["kind"], "members": curator_state.parse_members(r["members"])},
            )

        self.ctx.store.write(write)
        return self._proposals([r["id"]])[0]

    def undo(self, proposal_id: int, reason: str = "") -> Proposal:
        """Restore exactly the state before the apply (refused if a touched row changed since)."""
        r = self._proposal_row(proposal_id)
        if r["status"] != "applied":
            raise InvalidInput(f"proposal {r['id']} is {r['status']}; only an applied proposal can be undone")
        now = self.ctx.clock.now()

        def write(conn):
            row = conn.execute("SELECT * FROM proposals WHERE id = ?", (r["id"],)).fetchone()
            if row["status"] != "applied":
                raise InvalidInput(
                    f"proposal {r['id']} is {row['status']}; only an applied proposal can be undone"
                )
            done = curator_apply.undo(conn, row)
            conn.execute(
                "UPDATE proposals SET status = 'undone', undone_at = ?, snapshot = NULL WHERE id = ?",
                (now, r["id"]),
            )
            curator_apply.record(
                conn,
                self.ctx.actor,
                r["id"],
                "proposal-undone",
                now,
                reason,
                {
                    "kind": row["kind"],
                    "members": curator_state.parse_members(row["members"]),
                    "result_id": row["result_id"],
                    **done,
                },
            )

        self.ctx.store.write(write)
        return self._proposals([r["id"]])[0]
