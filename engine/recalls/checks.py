"""Retrieval checks: an operator pins "for this query (and filters), memory M must be in the top
k". A check runs on demand (`run`) and after the changes that could break it: the curator's
apply/undo, a forget, a decay pass that archives, an import mark the checks of the memories they
touched due in their own write (`mark_due`, one statement); `run_due` runs just those, and the
header's failure count asks `failing()`, which runs what is due first. Adding and removing are
audited; a run's outcome is the check's own state (like a log, not audited per run)."""

from __future__ import annotations

import builtins
import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from engine.audit import log as audit
from engine.errors import InvalidInput, NotFound
from engine.recalls.log import filters_doc, request_from
from engine.recalls.types import Check, CheckRun
from engine.retrieval.request import SearchRequest

if TYPE_CHECKING:
    from engine.context import Context
    from engine.retrieval.search import Retrieval
    from engine.storage.port import Connection

MAX_CHECK_K = 200


def mark_due(conn: Connection, memory_ids: Any) -> None:
    """The hook a service calls inside its write: the checks pinning these memories (None: all)
    run again on the next look."""
    conn.retrieval_checks.mark_due(None if memory_ids is None else [int(m) for m in memory_ids])


class Checks:
    def __init__(self, ctx: Context, retrieval: Retrieval) -> None:
        self.ctx = ctx
        self.retrieval = retrieval
        # Outcomes a read-only engine computed (it cannot store them), valid at one data version.
        self._kept: dict[int, tuple[float, bool, int | None, str]] = {}
        self._kept_at: int | None = None

    # -- pinning -----------------------------------------------------------------------------------
    def add(
        self,
        query: str,
        memory_id: int,
        k: int = 10,
        tier: Any = None,
        kind: str | None = None,
        category: str | None = None,
        agent: str | None = None,
        user: str | None = None,
        mode: str | None = None,
        recall_id: int | None = None,
    ) -> Check:
        """Pin "memory `memory_id` is in the top `k` for this query and filters"; runs it once."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("a check needs a query")
        if not 1 <= int(k) <= MAX_CHECK_K:
            raise InvalidInput(f"k must be between 1 and {MAX_CHECK_K}")
        req = SearchRequest.make(query, k, tier, kind, category, agent, user, mode, record_access=False)
        mid = int(memory_id)
        if not self.ctx.store.query(lambda c: c.recall_queries.fates([mid])):
            raise NotFound(f"no memory with id {mid}")
        now, actor = self.ctx.clock.now(), self.ctx.actor
        fdoc = json.dumps(filters_doc(req.filters), ensure_ascii=False, sort_keys=True)

        def write(conn: Connection) -> int:
            cid = conn.retrieval_checks.add(query, fdoc, mode or "", mid, int(k), now, actor, recall_id)
            summary = {"memory_id": mid, "k": int(k), "recall_id": recall_id}
            audit.append(conn, at=now, actor=actor, action="check-add", target_kind="retrieval_check",
                         target_id=cid, summary=summary)  # fmt: skip
            return cid

        cid = self.ctx.store.write(write)
        return self.run([cid]).checks[0]

    def add_from_recall(self, recall_id: int, memory_id: int, k: int | None = None) -> Check:
        """Pin a memory for a logged recall's query, filters and mode (its k unless given)."""
        from engine.recalls.service import Recalls

        rec = Recalls(self.ctx, self.retrieval).get(recall_id)
        f = rec.filters
        mode = rec.mode if rec.mode in ("hybrid", "keyword", "vector") else None
        return self.add(rec.query, memory_id, k or rec.k, f.get("tier"), f.get("kind"), f.get("category"),
                        f.get("agent"), f.get("user"), mode, recall_id=rec.id)  # fmt: skip

    def remove(self, check_id: int) -> None:
        now, actor = self.ctx.clock.now(), self.ctx.actor

        def write(conn: Connection) -> None:
            if not conn.retrieval_checks.remove(int(check_id)):
                raise NotFound(f"no retrieval check with id {check_id}")
            audit.append(conn, at=now, actor=actor, action="check-remove", target_kind="retrieval_check",
                         target_id=int(check_id))  # fmt: skip

        self.ctx.store.write(write)

    # -- reading -------------------------------------------------------------------------------------
    def list(self) -> builtins.list[Check]:
        return [Check.of(r) for r in self.ctx.store.query(lambda c: c.recall_queries.checks())]

    def get(self, check_id: int) -> Check:
        r = self.ctx.store.query(lambda c: c.recall_queries.check(int(check_id)))
        if r is None:
            raise NotFound(f"no retrieval check with id {check_id}")
        return Check.of(r)

    def failing(self) -> builtins.list[Check]:
        """The checks failing now (what is due runs first): the header's count and the list. The
        header asks on every live refresh, so a refresh where nothing is due and nothing fails costs
        one small aggregate, and no check runs."""
        due, failed = self.ctx.store.query(lambda c: c.recall_queries.check_counts())
        if not due:
            self._kept = {}  # nothing due: the stored outcomes are the latest
            return [c for c in self.list() if c.last_ok is False] if failed else []
        ran = {c.id: c for c in self.run_due().checks}
        return [c for c in (ran.get(x.id, x) for x in self.list()) if c.last_ok is False]

    # -- running ---------------------------------------------------------------------------------------
    def run_due(self) -> CheckRun:
        due = [Check.of(r) for r in self.ctx.store.query(lambda c: c.recall_queries.checks(due_only=True))]
        if not due:
            return CheckRun([])
        if self.ctx.store.readonly:
            # A read-only store keeps no outcome, so its due flags never clear: without this, every
            # live refresh of a standby's header ran every due check again. Its outcomes are kept in
            # memory until the data moves (another process commits, the standby replays).
            version = self.ctx.store.data_version()
            if self._kept_at == version and all(c.id in self._kept for c in due):
                return CheckRun([self._with_kept(c) for c in due])
        return self._run(due)

    def run(self, ids: builtins.list[int] | None = None) -> CheckRun:
        """Run the checks `ids` (default: every one) now."""
        checks = self.list() if ids is None else [self.get(i) for i in ids]
        return self._run(checks)

    def _run(self, checks: builtins.list[Check]) -> CheckRun:
        version = self.ctx.store.data_version() if self.ctx.store.readonly else None
        outcomes = [(c, *self._one(c)) for c in checks]
        now = self.ctx.clock.now()
        if self.ctx.store.readonly:  # a standby runs them and keeps the outcome in memory only
            if self._kept_at != version:
                self._kept = {}
            self._kept_at = version
            self._kept.update({c.id: (now, ok, rank, why) for c, ok, rank, why in outcomes})
            return CheckRun([self._with_kept(self.get(c.id)) for c in checks])

        def write(conn: Connection) -> None:
            for c, ok, rank, why in outcomes:
                conn.retrieval_checks.record_run(c.id, now, ok, rank, why)

        if outcomes:
            self.ctx.store.write(write)
        return CheckRun([self.get(c.id) for c in checks])

    def _with_kept(self, c: Check) -> Check:
        """`c` with the outcome this read-only engine last computed for it, if any."""
        kept = self._kept.get(c.id)
        if kept is None:
            return c
        at, ok, rank, why = kept
        return replace(c, last_run_at=at, last_ok=ok, last_rank=rank, last_why=why)

    def request_of(self, c: Check) -> SearchRequest:
        return request_from(c.query, c.k, c.filters, c.mode)

    def _one(self, c: Check) -> tuple[bool, int | None, str]:
        """(passed, its rank in the top k or None, why not when it failed)."""
        req = self.request_of(c)
        res = self.retrieval.search(req)
        ids = [h.id for h in res.hits]
        if c.memory_id in ids:
            return True, ids.index(c.memory_id) + 1, ""
        ex = self.retrieval.explain(req, c.memory_id)
        return False, None, ex.summary
