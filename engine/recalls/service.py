"""The recall log as the operator reads it: browse, open one, ask why a memory was not returned,
replay it against today's store and see what changed and why."""

from __future__ import annotations

import builtins
import time
from typing import TYPE_CHECKING

from engine.clock import parse_time
from engine.errors import InvalidInput, NotFound
from engine.recalls import log as recall_log
from engine.recalls import replay
from engine.recalls.types import LoggedHit, Recall, ReplayDiff
from engine.retrieval.request import SearchRequest

if TYPE_CHECKING:
    from engine.context import Context
    from engine.retrieval.search import Retrieval
    from engine.types import Explanation, SearchResult

MAX_LIST = 10_000


class Recalls:
    def __init__(self, ctx: Context, retrieval: Retrieval) -> None:
        self.ctx = ctx
        self.retrieval = retrieval

    def list(
        self,
        agent: str | None = None,
        since: float | str | None = None,
        text: str | None = None,
        limit: int = 200,
    ) -> builtins.list[Recall]:
        """Logged recalls, newest first: by `agent` (the agent or the caller), at or after `since`
        (seconds since the epoch, or ISO text), whose query holds `text`."""
        since = parse_time(since) if isinstance(since, str) else since
        if not 1 <= int(limit) <= MAX_LIST:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIST}")
        rows = self.ctx.store.query(
            lambda c: c.recall_queries.recalls(agent or None, since, text or None, limit)
        )
        return [Recall.of(r) for r in rows]

    def get(self, recall_id: int) -> Recall:
        r = self.ctx.store.query(lambda c: c.recall_queries.recall(int(recall_id)))
        if r is None:
            raise NotFound(f"no logged recall with id {recall_id}")
        return Recall.of(r)

    def count(self) -> int:
        return self.ctx.store.query(lambda c: c.recall_queries.count())

    def request_of(self, rec: Recall, k: int | None = None) -> SearchRequest:
        """The logged recall's search, to run again: no access recorded, not logged again."""
        return recall_log.request_from(rec.query, k or rec.k, rec.filters, rec.mode)

    def why_not(self, recall_id: int, memory_id: int) -> Explanation:
        """ "Why not memory N?" for the logged recall's query, filters, mode and k, as of now."""
        rec = self.get(recall_id)
        return self.retrieval.explain(self.request_of(rec), int(memory_id))

    def rerun(self, rec: Recall) -> SearchResult:
        return self.retrieval.search(self.request_of(rec))

    def replay(self, recall_id: int) -> ReplayDiff:
        """Run the logged recall now and name what changed: hits that left or entered, and the
        cause where the store knows it (merge, forget case, archive, edit, new)."""
        rec = self.get(recall_id)
        t0 = time.perf_counter()
        res = self.rerun(rec)
        took = (time.perf_counter() - t0) * 1000
        now = [LoggedHit(h["id"], h["score"], h["parts"]) for h in recall_log.hits_doc(res)]
        left, entered = replay.diff(rec, now)
        why = self.ctx.store.query(lambda c: replay.causes(c, rec, left, entered)) if left or entered else {}
        gone, new = replay.changes(rec, now, why)
        return ReplayDiff(rec.id, rec.query, rec.hits, now, gone, new, res.mode, round(took, 3), res.message)

    def prune(self) -> int:
        """Apply retention now ([recalls] keep_days, max_rows); audited when rows go."""
        return self.ctx.store.write(lambda c: recall_log.prune_in(c, self.ctx, self.ctx.clock.now()))
