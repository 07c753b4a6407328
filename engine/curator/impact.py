"""Impact before approval (issue #26): which searches' top k would change if a pending proposal
were applied — computed on a dry run, never by applying.

Inside one dry-run write (the store's `dry_run`: a transaction, or a savepoint, rolled back), each
query is searched, the proposal is applied exactly as approval would apply it, and each query is
searched again on the same connection; then everything is rolled back. Inside a write the
in-memory matrices are not used (they must not see what may roll back), so both searches take the
store's own SQL path and see the same snapshot. Nothing of the preview stays: no row, no audit
entry, no access recorded.

The queries come from the caller: today the members' own texts (`member_queries`) and whatever an
operator names; the recall log and pinned retrieval checks (issue #26, another module) feed the same
`ImpactQuery` list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.curator import apply as curator_apply
from engine.errors import InvalidInput, NotFound
from engine.retrieval.request import SearchRequest
from engine.storage.port import Connection

if TYPE_CHECKING:
    from engine.context import Context
    from engine.memories import MemoriesService
    from engine.retrieval.search import Retrieval

NEW_RECORD = 0  # in `after`: the record the apply would create (its id exists only once applied)
MAX_QUERIES = 200  # one preview is one write transaction: keep it short


@dataclass(frozen=True)
class ImpactQuery:
    """A search whose answer the operator cares about: a logged recall, a pinned check, a query."""

    label: str  # "recall #12", "check #3", "member #40", "query"
    query: str
    filters: dict[str, Any] = field(default_factory=dict)  # tier, kind, category, agent, user
    k: int = 10
    mode: str | None = None  # None: hybrid when the model is ready (as the search itself)


@dataclass(frozen=True)
class ImpactRow:
    label: str
    query: str
    k: int
    before: list[int]  # the top k now
    after: list[int]  # the top k once applied (NEW_RECORD: the merged memory / promoted rule)
    entered: list[int]
    left: list[int]

    @property
    def changed(self) -> bool:
        return self.before != self.after


def member_queries(texts: dict[int, str], k: int = 10) -> list[ImpactQuery]:
    """Each member's own text as a query: would a search for what it says still find it?"""
    return [ImpactQuery(f"member #{m}", t, {}, k) for m, t in texts.items() if t.strip()]


def _requests(queries: list[ImpactQuery]) -> list[SearchRequest]:
    if len(queries) > MAX_QUERIES:
        raise InvalidInput(f"an impact preview takes at most {MAX_QUERIES} queries, not {len(queries)}")
    out = []
    for q in queries:
        f = dict(q.filters or {})
        unknown = set(f) - {"tier", "kind", "category", "agent", "user"}
        if unknown:
            raise InvalidInput(f"unknown filter(s) {', '.join(sorted(unknown))} in {q.label}")
        out.append(SearchRequest.make(q.query, q.k, mode=q.mode, record_access=False, **f))
    return out


def impact(
    ctx: Context,
    memories: MemoriesService,
    retrieval: Retrieval,
    proposal_id: int,
    queries: list[ImpactQuery],
    text: str | None = None,
    vector: Any = None,
) -> list[ImpactRow]:
    """One row per query: its top k before and after applying the pending proposal (with `text`,
    an edit; `vector`, that edit's embedding), on a dry run. Raises what approval would raise
    (stale, not pending)."""
    reqs = _requests(queries)
    now = ctx.clock.now()

    def preview(conn: Connection) -> tuple[list[list[int]], list[list[int]]]:
        row = conn.curator_queries.proposal(int(proposal_id))
        if row is None:
            raise NotFound(f"no proposal with id {proposal_id}")
        if row["status"] != "pending":
            raise InvalidInput(f"proposal {row['id']} is {row['status']}; impact is shown before approval")
        before = [[h.id for h in retrieval.search(r).hits] for r in reqs]
        ap = curator_apply.Applier(ctx, memories, conn, row, now, "impact preview (rolled back)")
        ap.apply(text, vector)
        made = set(ap.created["memories"])  # a merge's new memory (a promote makes a rule)
        after = [
            [NEW_RECORD if h.id in made else h.id for h in res.hits]
            for res in (retrieval.search(r) for r in reqs)
        ]
        return before, after

    before, after = ctx.store.dry_run(preview)
    return [
        ImpactRow(
            q.label,
            q.query,
            q.k,
            b,
            a,
            [i for i in a if i not in b],
            [i for i in b if i not in a],
        )
        for q, b, a in zip(queries, before, after, strict=True)
    ]
