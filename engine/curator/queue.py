"""Reading the curator's queue: proposals by id or filter, one proposal with its members as they
are now (text, tier or status, strength or score, similarities), the runs and the last report."""

from __future__ import annotations

import builtins
from pathlib import Path

import numpy as np

from engine.context import Context
from engine.curator.rows import as_text, display_num, row_to_proposal, run_from_row
from engine.curator.types import (
    PROPOSAL_KINDS,
    PROPOSAL_STATUSES,
    CuratorRun,
    Proposal,
    ProposalDetail,
    ProposalMember,
)
from engine.errors import InvalidInput, NotFound, cut
from engine.memories import MemoriesService
from engine.storage.port import Connection


class ProposalQueue:
    """The curator's read side, composed by `Curator`: nothing here writes."""

    def __init__(self, ctx: Context, memories: MemoriesService) -> None:
        self.ctx = ctx
        self.memories = memories  # member strengths for display

    def member_texts(self, proposals: builtins.list[Proposal]) -> dict:
        """(target kind, id) -> the member's text now ("" when it is gone), for the report."""
        want: dict[str, set[int]] = {"memory": set(), "rule": set()}
        for p in proposals:
            want[_kind(p.target_kind)].update(p.members)

        def read(c: Connection) -> dict:
            return {k: c.curator_queries.member_texts(k, ids) for k, ids in want.items() if ids}

        found = self.ctx.store.query(read)
        out = {}
        for p in proposals:
            for m in p.members:
                got = found.get(_kind(p.target_kind), {}).get(m)
                out[(p.target_kind, m)] = got[0] if got else ""
        return out

    def proposals(self, ids: builtins.list[int]) -> builtins.list[Proposal]:
        if not ids:
            return []
        rows = self.ctx.store.query(lambda c: c.curator_queries.proposals(ids))
        return [row_to_proposal(r) for r in rows]

    def list(
        self, status: str | None = None, kind: str | None = None, limit: int = 1000
    ) -> builtins.list[Proposal]:
        if status is not None and status not in PROPOSAL_STATUSES:
            raise InvalidInput(f"unknown status {cut(status)}; use one of {', '.join(PROPOSAL_STATUSES)}")
        if kind is not None and kind not in PROPOSAL_KINDS:
            raise InvalidInput(f"unknown kind {cut(kind)}; use one of {', '.join(PROPOSAL_KINDS)}")
        rows = self.ctx.store.query(lambda c: c.curator_queries.list_proposals(status, kind, int(limit)))
        return [row_to_proposal(r) for r in rows]

    def get(self, proposal_id: int) -> ProposalDetail:
        p = row_to_proposal(self.row(proposal_id))
        members: builtins.list[ProposalMember] = []
        vecs = {}
        rows = self.ctx.store.query(
            lambda c: {m: c.curator_queries.member(_kind(p.target_kind), m) for m in p.members}
        )
        for m in p.members:
            r = rows[m]
            if p.target_kind == "memory":
                v = self.ctx.vectors.vector_of(m) if r is not None else None
                if v is not None:
                    vecs[m] = v
                members.append(
                    ProposalMember(
                        m,
                        "memory",
                        as_text(r["content"]),
                        as_text(r["tier"]),
                        display_num(self.memories.current_strength, r),
                        as_text(r["agent"]),
                    )
                    if r
                    else ProposalMember(m, "memory", "", "gone", 0.0, "", exists=False)
                )
            else:
                members.append(
                    ProposalMember(
                        m,
                        "rule",
                        as_text(r["text"]),
                        as_text(r["status"]),
                        display_num(float, r["score"]),
                        as_text(r["agent"]),
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

    def row(self, proposal_id: int):
        try:
            pid = int(proposal_id)
        except (TypeError, ValueError):
            raise InvalidInput(f"a proposal id is a whole number, not {cut(proposal_id)}") from None
        r = self.ctx.store.query(lambda c: c.curator_queries.proposal(pid))
        if r is None:
            raise NotFound(f"no proposal with id {pid}")
        return r

    def runs(self, limit: int = 50) -> builtins.list[CuratorRun]:
        rows = self.ctx.store.query(lambda c: c.curator_queries.runs(int(limit)))
        return [run_from_row(r, []) for r in rows]

    def latest_run(self) -> CuratorRun | None:
        """The last real run, with the proposals it made (the Curator pane's report view)."""
        r = self.ctx.store.query(lambda c: c.curator_queries.latest_run())
        if r is None:
            return None
        ids = self.ctx.store.query(lambda c: c.curator_queries.run_proposal_ids(r["id"]))
        return run_from_row(r, self.proposals(ids))

    def latest_report(self) -> str | None:
        """The Markdown report of the last real run, if its file is still there."""
        run = self.latest_run()
        if run is None or not run.report_dir:
            return None
        f = Path(run.report_dir) / "REPORT.md"
        return f.read_text(encoding="utf-8") if f.exists() else None


def _kind(target_kind: str) -> str:
    """The table a member is read from: memories for a memory proposal, rules otherwise."""
    return "memory" if target_kind == "memory" else "rule"
