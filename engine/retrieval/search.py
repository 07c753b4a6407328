"""Hybrid search: BM25 over the store's keyword index and exact cosine KNN (the store's vector
index, or the in-memory matrix of a long-lived engine) with the same filters inside each, fused
score-aware (engine/fusion.py), then weighted by strength, importance and recency. Every hit
carries its whole score breakdown."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.recalls import log as recall_log
from engine.retrieval import fusion
from engine.retrieval.explain import Explainer
from engine.retrieval.filters import Filters
from engine.retrieval.keyword import KeywordRetriever
from engine.retrieval.named_near import NamedAndNear
from engine.retrieval.query import (
    FtsPlan,
    clean,
    plan,
)
from engine.retrieval.request import SearchRequest
from engine.types import Breakdown, Explanation, Hit, SearchResult, load_json

if TYPE_CHECKING:
    from engine.config import SearchSettings
    from engine.context import Context
    from engine.memories import MemoriesService
    from engine.sessions import SessionsService


class Retrieval(NamedAndNear):
    """Search and explain: the keyword retriever and the vector index (ctx.vectors) in
    parallel, fused, weighted by each memory's state. Composes a KeywordRetriever and an
    Explainer; reads memories' strength and session matches through their services."""

    def __init__(self, ctx: Context, memories: MemoriesService, sessions: SessionsService) -> None:
        self.ctx = ctx
        self.memories = memories
        self.sessions = sessions
        self.keyword = KeywordRetriever(ctx)
        self.explainer = Explainer(ctx, memories, self.keyword, self)

    # -- the retrievers, as the rest of the engine (and benches) call them --------------------------
    def keyword_plan(self, text: str) -> FtsPlan:
        return self.keyword.plan(text)

    def keyword_ranks(self, p: FtsPlan, filters: Filters, n: int) -> dict[int, tuple[int, float]]:
        return self.keyword.ranks(p, filters, n)

    def embed_query(self, text: str) -> np.ndarray:
        return self.ctx.embedder.require().embed([text])[0]

    def explain(self, request: SearchRequest, memory_id: int) -> Explanation:
        return self.explainer.explain(request, memory_id)

    # -- search ----------------------------------------------------------------------------------------
    def search(self, request: SearchRequest) -> SearchResult:
        """Never raises for odd query text: a query that cannot be searched returns no hits and a
        message. Bad filters or k are refused when the request is made (SearchRequest.make)."""
        return self.search_with_context(request)[0]

    def search_with_context(self, request: SearchRequest) -> tuple[SearchResult, fusion.FusionContext]:
        """`search`, with what the fused scores were computed against (explain scores a memory
        that missed the top k against the same)."""
        started = time.perf_counter()
        k, filters, mode = request.k, request.filters, request.mode
        ctx = self.ctx
        embedder, settings = ctx.embedder, ctx.settings.search
        q = clean(request.query)
        message = None
        ctx.vectors.follow_model(embedder)  # a store switched to another model (engine/embedding)
        ran = mode or ("hybrid" if embedder.ready else "keyword")
        if mode is None and not embedder.ready:
            message = "keyword-only: the embedding model is " + (
                "loading" if embedder.state == "loading" else "not available"
            )
        if ran in ("hybrid", "vector") and not embedder.ready:
            if mode is not None:
                embedder.wait()
            if not embedder.ready:
                ran = "keyword"
                message = "keyword-only: no embedding model is available" + (
                    f" ({embedder.error})" if embedder.error else ""
                )
        # A fixed pool, whatever k is: the fusion's scales (best BM25, best and last cosine) and so
        # the first n hits are the same for every k >= n (issue #26). More is read only past it.
        n = settings.candidates
        qvec = self.embed_query(q) if ran in ("hybrid", "vector") and q.strip() else None
        # One read snapshot for both retrievers and the fusion's reads: every part sees the same
        # database, and a server answers in one transaction instead of one per read.
        with ctx.store.reading():
            # The bounded plan reads document frequencies: only when the keyword side runs.
            p = self.keyword.plan(q) if ran != "vector" else plan(q)
            kw = self.keyword.ranks(p, filters, n) if ran != "vector" else {}
            vec: dict[int, tuple[int, float]] = {}
            if qvec is not None:
                vec = {mid: (i + 1, sim) for i, (mid, sim) in enumerate(ctx.vectors.knn(qvec, n, filters))}
            hits, fctx = self.fuse(kw, vec, k, filters, hybrid=ran == "hybrid", query=q)
            if len(hits) < k and (len(kw) >= n or len(vec) >= n):
                more = self.deeper(p, qvec, filters, k, kw, vec, fctx, hybrid=ran == "hybrid", query=q)
                hits += more[: k - len(hits)]
        if ran != "vector":
            self.keyword.note_search(settings.keyword_matrix_after)
        if qvec is not None:
            ctx.vectors.note_search(settings.matrix_after)
        if not q.strip():
            message = "nothing to search for: the query is empty"
        elif p.index == "none" and ran == "keyword":
            message = "nothing to search for: the query has no words"
        if message is None and vec and (not hits or all(h.weak for h in hits)):
            weak = f"no keyword match and a cosine below {settings.weak_below:g} (search.weak_below)"
            message = (
                f"every match was weak ({weak}); search.weak_floor_cut leaves those out"
                if not hits
                else f"every hit is weak: {weak}"
            )
        # The text as searched: lone surrogates cannot be printed or sent as JSON.
        result = SearchResult(
            query=q,
            mode=ran,
            hits=hits,
            message=message,
            keyword_scope=self.keyword.scope_notes(p) if ran != "vector" else [],
        )
        # A read-only store (a standby) records no access and logs no recall: its reads stay reads.
        writable = not ctx.store.readonly
        log = writable and recall_log.wanted(ctx, request)
        if (request.record_access and hits and writable) or log:
            now = ctx.clock.now()
            ids = [h.id for h in hits]
            agent = filters.agent if filters is not None else None
            took = (time.perf_counter() - started) * 1000
            model = getattr(embedder.get(), "name", "") if qvec is not None else ""

            def write(c: Any) -> None:
                if request.record_access and ids and writable:
                    self.memories.record_access(
                        c, ids, now, query=q, agent=agent, reason=f"returned by search ({ran})"
                    )
                if log:  # the recall log's hook: one more statement in the same write
                    recall_log.record_in(c, ctx, request, result, took, model)

            ctx.store.write(write)
        if len(hits) < min(k, settings.thin_results):
            result.elsewhere = self.elsewhere(q, filters)
        return result, fctx

    def deeper(
        self,
        p: FtsPlan,
        qvec: np.ndarray | None,
        filters: Filters,
        k: int,
        kw: dict[int, tuple[int, float]],
        vec: dict[int, tuple[int, float]],
        fctx: fusion.FusionContext,
        hybrid: bool,
        query: str,
    ) -> list[Hit]:
        """Hits past the pool, for a k larger than the pool yields: each retriever's top k minus
        the pool's candidates, scored on the pool's scale (`fctx`) and ranked after the pool's hits,
        so asking for more never reorders what a smaller k showed."""
        seen = {*kw, *vec}
        more_kw = {m: r for m, r in self.keyword.ranks(p, filters, k).items() if m not in seen} if kw else {}
        more_vec: dict[int, tuple[int, float]] = {}
        if qvec is not None:
            got = self.ctx.vectors.knn(qvec, k, filters)
            more_vec = {mid: (i + 1, sim) for i, (mid, sim) in enumerate(got) if mid not in seen}
        if not more_kw and not more_vec:
            return []
        named = fctx.named  # what the query names stays the pool's (explain scores against it)
        hits, _ = self.fuse(more_kw, more_vec, k, filters, hybrid, query, fctx=fctx)
        fctx.named = named
        return hits

    def fuse(
        self,
        kw: dict[int, tuple[int, float]],
        vec: dict[int, tuple[int, float]],
        k: int,
        filters: Filters | None = None,
        hybrid: bool = False,
        query: str = "",
        fctx: fusion.FusionContext | None = None,
    ) -> tuple[list[Hit], fusion.FusionContext]:
        """The top k of both rankings, fused (engine/fusion.py) and weighted by state. Hybrid adds
        the boosts for whom and when the query names, and session context. `fctx`: score on a
        pool's scale (deeper candidates, see `deeper`)."""
        s = self.ctx.settings.search
        store = self.ctx.store
        raw, fctx = fusion.fuse(kw, vec, s, fctx)
        if not raw:
            return [], fctx
        read: dict[int, Any] = {}  # weighting rows named_boosts already read
        boost = self.named_boosts(query, raw, fctx, read) if hybrid and query else {}
        fused = {m: v * boost.get(m, 1.0) for m, v in raw.items()}
        near = {}
        if hybrid and s.session_context > 0 and filters is not None:
            near = self.session_context(fused, filters)
        fctx.fused.update(fused)
        total = {m: fused.get(m, 0.0) + near.get(m, 0.0) for m in {*fused, *near}}
        if s.weak_floor_cut:  # weak candidates never reach the top k
            total = {m: v for m, v in total.items() if not is_weak(m, kw, vec, s)}
            if not total:
                return [], fctx
        # State weighting scales a fused score by a factor in [floor, 1], so a candidate below
        # floor x the k-th best fused score can never reach the top k: skip loading its row.
        floor = 1.0 - s.strength_weight - s.importance_weight - s.recency_weight
        ids = sorted(total, key=lambda m: -total[m])
        if len(ids) > k:
            bar = total[ids[k - 1]] * floor
            ids = [m for m in ids if total[m] >= bar]
        # Score on the few columns weighting needs; read whole rows only for the k returned.
        rows = {m: read[m] for m in ids if m in read}
        missing = [m for m in ids if m not in read]
        if missing:
            rows.update((int(r["id"]), r) for r in store.query(lambda c: c.memory_queries.weighting(missing)))
        now = self.ctx.clock.now()
        strength_of = self.memories.current_strength
        finals = []
        for mid in ids:
            r = rows.get(mid)
            if r is None:
                continue
            strength = strength_of(r, now)
            last = max(float(r["created_at"] or 0), float(r["last_accessed_at"] or 0))
            rec = fusion.recency(now, last, s)
            final = fusion.weight(total[mid], strength, float(r["importance"]), rec, s)
            finals.append((-round(final, 6), mid, strength, float(r["importance"]), rec, final))
        finals.sort()
        top = finals[:k]
        if not top:  # every candidate was deleted meanwhile
            return [], fctx
        top_ids = [t[1] for t in top]
        full = {int(r["id"]): r for r in store.query(lambda c: c.memory_queries.rows(top_ids))}
        scored = []
        for _, mid, strength, importance, rec, final in top:
            r = full.get(mid)
            if r is None:
                continue
            b = Breakdown(
                bm25_rank=kw[mid][0] if mid in kw else None,
                bm25_score=round(kw[mid][1], 6) if mid in kw else None,
                vector_rank=vec[mid][0] if mid in vec else None,
                vector_similarity=round(vec[mid][1], 6) if mid in vec else None,
                rrf=round(raw.get(mid, 0.0), 6),
                strength=round(strength, 4),
                importance=round(importance, 4),
                recency=round(rec, 4),
                final=round(final, 6),
                context=round(near.get(mid, 0.0), 6),
                boost=round(boost.get(mid, 1.0), 6),
            )
            scored.append(
                Hit(
                    id=mid,
                    content=r["content"],
                    kind=r["kind"],
                    category=r["category"],
                    tier=r["tier"],
                    agent=r["agent"],
                    user=r["user"],
                    metadata=load_json(r["metadata"]),
                    score=b.final,
                    breakdown=b,
                    weak=is_weak(mid, kw, vec, s),
                )  # fmt: skip
            )
        scored.sort(key=lambda h: (-h.score, h.id))
        return scored[:k], fctx

    # -- where else the query matches ----------------------------------------------------------------
    def elsewhere(self, query: str, filters: Filters) -> dict[str, Any]:
        """Matches outside the searched tiers and in session transcripts, so an empty result is
        never read as proof that nothing is known."""
        p = self.keyword.plan(query)
        out: dict[str, Any] = {}
        other = tuple(t for t in ("core", "active", "archived") if t not in filters.tiers)
        if other and p.index != "none":
            alt = Filters(other, filters.kind, filters.category, filters.agent, filters.user)
            ranks = self.keyword.ranks(p, alt, 200)
            if ranks:
                out["other_tiers"] = {"tiers": list(other), "matches": len(ranks), "ids": list(ranks)[:10]}
        unfiltered = Filters(("core", "active", "archived"))
        if filters != Filters(filters.tiers) and p.index != "none":
            ranks = self.keyword.ranks(p, unfiltered, 200)
            if ranks:
                out["without_filters"] = {"matches": len(ranks), "ids": list(ranks)[:10]}
        n, sessions = self.sessions.count_matches(query)
        if n:
            out["messages"] = {"matches": n, "sessions": sessions}
        return out


def is_weak(
    mid: int, kw: dict[int, tuple[int, float]], vec: dict[int, tuple[int, float]], s: SearchSettings
) -> bool:
    """No keyword match, and no cosine at or above search.weak_below: nothing but a faint vector."""
    return mid not in kw and (mid not in vec or vec[mid][1] < s.weak_below)
