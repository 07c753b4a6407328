"""The curator: a deterministic, offline pass that only proposes (merge, archive, promote, retire),
and the approval queue an operator works through (approve, optionally editing the text; reject
with a reason; undo an applied proposal exactly). Nothing changes a memory or a rule until a
proposal is approved, unless the settings name a kind in `curator.auto_apply` (off by default).

Queue states: pending -> approved | rejected; approved -> applied -> undone. A run is in running.py,
approving and undoing one proposal in deciding.py; this class is their one entry point.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from engine.context import Context
from engine.curator import apply as curator_apply
from engine.curator import bulk as curator_bulk
from engine.curator import deciding as curator_deciding
from engine.curator import running as curator_running
from engine.curator import state as curator_state
from engine.curator.impact import MAX_QUERIES, ImpactQuery, ImpactRow, impact, member_queries
from engine.curator.plan import ApplyPlan, UndoPlan, build_plan, undo_plan
from engine.curator.queue import ProposalQueue
from engine.curator.risky import risk_of
from engine.curator.types import (
    CuratorRun,
    Proposal,
    ProposalDetail,
    ProposalRow,
)
from engine.errors import InvalidInput
from engine.memories import MemoriesService
from engine.memory_input import check_text
from engine.storage.port import Connection

if TYPE_CHECKING:
    from engine.retrieval.search import Retrieval


class Curator:
    """`eng.curator`: runs the scan, keeps the queue, applies and undoes decisions exactly."""

    def __init__(self, ctx: Context, memories: MemoriesService, retrieval: Retrieval | None = None) -> None:
        self.ctx = ctx
        self.memories = memories  # member strengths for display and merges
        self.retrieval = retrieval  # impact previews search before and after a dry-run apply
        self.queue = ProposalQueue(ctx, memories)

    # -- running -------------------------------------------------------------------------------------
    def run(self, dry_run: bool = False, progress=None, use_model: bool | None = None) -> CuratorRun:
        """Scan and queue proposals. Incremental after the first run: only memories added or edited
        since the last run's watermark are compared (against every mergeable memory).
        `use_model`: compare rules by meaning (True waits for the model; None uses it if loaded).
        `progress(stage, done, total)` is called as it goes. A dry run is the same write rolled back
        (the store's dry run): nothing stays, no report is written, nothing is auto-applied."""
        return curator_running.run(self, dry_run, progress, use_model)

    # -- reading the queue (ProposalQueue) --------------------------------------------------------------
    def list(
        self, status: str | None = None, kind: str | None = None, limit: int = 1000
    ) -> builtins.list[Proposal]:
        return self.queue.list(status, kind, limit)

    def rows(
        self,
        status: str | None = None,
        kind: str | None = None,
        agent: str | None = None,
        limit: int = 1000,
        text: str | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> builtins.list[ProposalRow]:
        """The queue as a list shows it: each proposal with the text it is about (the member's
        text for archive/retire) and its members' agents; `agent` keeps those with a member of it,
        `text` those whose text holds every word (any case), `since`/`until` bound created_at."""
        narrowed = agent is not None or text or since is not None or until is not None
        props = self.queue.list(status, kind, 1_000_000 if narrowed else limit)
        out = curator_bulk.rows(self.ctx, props, agent)
        out = [r for r in out if row_matches(r, text, since, until)][: int(limit)]
        # Stale is shown before acting (issue #25): the list marks what approval would refuse.
        stale = self.stale([r.proposal.id for r in out if r.proposal.status == "pending"])
        for r in out:
            r.stale = stale.get(r.proposal.id)
        return out

    def get(self, proposal_id: int) -> ProposalDetail:
        return self.queue.get(proposal_id)

    def runs(self, limit: int = 50) -> builtins.list[CuratorRun]:
        return self.queue.runs(limit)

    def latest_run(self) -> CuratorRun | None:
        """The last real run, with the proposals it made (the Curator pane's report view)."""
        return self.queue.latest_run()

    def latest_report(self) -> str | None:
        """The Markdown report of the last real run, if its file is still there."""
        return self.queue.latest_report()

    # -- deciding ---------------------------------------------------------------------------------------
    def plan(self, proposal_id: int, text: str | None = None) -> ApplyPlan:
        """What approving the pending proposal (with `text`, an edit of its survivor or rule text)
        will do, from its members as they are now: the confirmation shows `plan.describe()` and
        `approve(..., plan=plan)` executes exactly it (refused if it no longer holds). Reads only."""
        r = self.queue.row(proposal_id)
        if r["status"] != "pending":
            raise InvalidInput(
                f"proposal {r['id']} is {r['status']}; only a pending proposal can be approved"
            )
        if text is not None:
            if r["kind"] not in ("merge", "promote"):
                raise InvalidInput(f"a {r['kind']} proposal has no text to edit")
            text = check_text(text, "text")
        return self.ctx.store.query(lambda c: build_plan(c, r, text))

    def impact(
        self,
        proposal_id: int,
        queries: builtins.list[ImpactQuery] | None = None,
        text: str | None = None,
        members: bool = True,
        logged: bool = True,
    ) -> builtins.list[ImpactRow]:
        """Which searches' top k would change if the pending proposal were applied (with `text`,
        an edit), computed on a dry run, never by applying (engine/curator/impact.py). `queries`:
        logged recalls, pinned checks, an operator's queries; `members`: also each member's own
        text as a query; `logged`: also the agents' logged recalls (last 30 days) that returned a
        member and every pinned retrieval check (engine/recalls/impact_queries.py). Every row is
        returned; `row.changed` says which would change."""
        if self.retrieval is None:
            raise InvalidInput("impact needs the engine's retrieval (open the curator through the engine)")
        r = self.queue.row(proposal_id)
        qs = list(queries or [])
        if members:
            texts = self.queue.member_texts(self.queue.proposals([int(r["id"])]))
            qs += member_queries({m: t for (_, m), t in texts.items()})
        if logged:
            from engine.recalls.impact_queries import check_queries, logged_queries

            qs += logged_queries(self.ctx, curator_state.parse_members(r["members"])) + check_queries(
                self.ctx
            )
            qs = qs[:MAX_QUERIES]
        if text is not None:
            text = check_text(text, "text")
        vector = self._vector_for(r, text)  # as approve computes it
        return impact(self.ctx, self.memories, self.retrieval, int(r["id"]), qs, text, vector)

    def undo_plan(self, proposal_id: int) -> UndoPlan:
        """What undoing the applied proposal restores (and which columns go back) and deletes, from
        its snapshot; `undo(..., plan=plan)` executes exactly it."""
        r = self.queue.row(proposal_id)
        if r["status"] != "applied":
            raise InvalidInput(f"proposal {r['id']} is {r['status']}; only an applied proposal can be undone")
        return undo_plan(r)

    def approve(
        self,
        proposal_id: int,
        text: str | None = None,
        reason: str = "",
        apply: bool = True,
        plan: ApplyPlan | None = None,
    ) -> Proposal:
        """Approve (optionally editing the survivor / rule text) and, by default, apply at once.
        `plan`: the plan the operator confirmed (`plan()`); the apply refuses if it differs."""
        return curator_deciding.approve(self, proposal_id, text, reason, apply, plan)

    def _vector_for(self, r, text: str | None):
        """An edited merge text needs its own vector; compute it before the transaction."""
        return curator_deciding.vector_for(self, r, text)

    def reject(self, proposal_id: int, reason: str) -> Proposal:
        r = self.queue.row(proposal_id)
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidInput("a rejection needs a reason")
        if r["status"] not in ("pending", "approved"):
            raise InvalidInput(
                f"proposal {r['id']} is {r['status']}; only a pending or approved proposal can be rejected"
            )
        now = self.ctx.clock.now()

        def write(conn: Connection) -> None:
            conn.proposals.rejected(r["id"], now, self.ctx.actor, reason)
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
        return self.queue.proposals([r["id"]])[0]

    # -- deciding many (each its own transaction) ---------------------------------------------------
    def pending(self, kind: str | None = None, agent: str | None = None) -> builtins.list[Proposal]:
        """Every pending proposal of a kind, optionally only those with a member of `agent`."""
        rows = self.queue.list("pending", kind, limit=1_000_000)
        return curator_bulk.filter_agent(self.ctx, rows, agent)

    def approve_many(
        self, ids: builtins.list[int], reason: str = "", include_risky: bool = False
    ) -> builtins.list[curator_bulk.BulkOutcome]:
        """Approve and apply each proposal in its own transaction; a stale or decided one is
        refused and reported (stale ones found before any is applied, `BulkOutcome.stale`), the
        others still apply. A risky merge (its members differ only in numbers or dates) is skipped
        and reported unless `include_risky`."""
        risky = {} if include_risky else self._risky(ids)
        stale = self.stale(ids)
        return curator_bulk.decide_each(
            ids, lambda i: self.approve(i, reason=reason), self._status, skip=risky, stale=stale
        )

    def stale(self, ids: builtins.list[int] | None = None) -> dict[int, str]:
        """{id: the one line approval would refuse it with} for the pending proposals among `ids`
        (default: every pending one) whose members changed since they were proposed. Reads only:
        what an operator sees before acting (issue #25)."""
        props = self.pending() if ids is None else self.queue.proposals([int(i) for i in ids])
        out: dict[int, str] = {}
        with self.ctx.store.reading() as conn:
            for p in props:
                if p.status != "pending":
                    continue
                try:
                    row = {"id": p.id, "kind": p.kind, "target_kind": p.target_kind}
                    curator_state.check_unchanged(conn, row, p.evidence)
                except InvalidInput as exc:
                    out[p.id] = str(exc).splitlines()[0]
        return out

    def reject_stale(
        self,
        reason: str,
        kind: str | None = None,
        agent: str | None = None,
        ids: builtins.list[int] | None = None,
    ) -> builtins.list[curator_bulk.BulkOutcome]:
        """Reject every stale pending proposal (of `kind`, with a member of `agent`; or, given
        `ids`, those of them that are still stale: what a confirmation listed) with `reason`, each in
        its own transaction and audited; the fresh ones are left alone."""
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidInput("a rejection needs a reason")
        if ids is None:
            ids = [p.id for p in self.pending(kind, agent)]
        return self.reject_many(sorted(self.stale([int(i) for i in ids])), reason)

    def _risky(self, ids: builtins.list[int]) -> dict[int, str]:
        out = {}
        for p in self.queue.proposals([int(i) for i in ids]):
            if p.status == "pending" and (why := risk_of(p.evidence)):
                out[p.id] = why
        return out

    def reject_many(self, ids: builtins.list[int], reason: str) -> builtins.list[curator_bulk.BulkOutcome]:
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidInput("a rejection needs a reason")
        return curator_bulk.decide_each(ids, lambda i: self.reject(i, reason), self._status)

    def _status(self, proposal_id: int) -> str | None:
        return self.ctx.store.query(lambda c: c.curator_queries.proposal_status(int(proposal_id)))

    def undo(self, proposal_id: int, reason: str = "", plan: UndoPlan | None = None) -> Proposal:
        """Restore exactly the state before the apply (refused if a touched row changed since).
        `plan`: the undo plan the operator confirmed (`undo_plan()`); refused if it differs."""
        return curator_deciding.undo(self, proposal_id, reason, plan)


def row_matches(r: ProposalRow, text: str | None, since: float | None, until: float | None) -> bool:
    """The filter language's words and time bounds on a queue row (issue #27)."""
    at = r.proposal.created_at
    if (since is not None and at < since) or (until is not None and at > until):
        return False
    hay = r.text.casefold()
    return all(w in hay for w in (text or "").casefold().split())
