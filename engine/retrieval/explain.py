"""`explain(query, memory_id)`: why a memory did or did not make the top k, in numbers and words."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from engine.errors import NotFound
from engine.retrieval import fusion
from engine.retrieval.filters import Filters
from engine.retrieval.keyword import fts_index
from engine.retrieval.query import FtsPlan, clean, quote
from engine.types import Explanation, Memory, SearchResult

if TYPE_CHECKING:
    from engine.context import Context
    from engine.memories import MemoriesService
    from engine.retrieval.keyword import KeywordRetriever
    from engine.retrieval.request import SearchRequest
    from engine.retrieval.search import Retrieval
    from engine.storage.indexes import KeywordIndex


class Explainer:
    """Answers "why (not) this memory?" with its full ranks in both retrievers, the terms it
    matches, the filters that exclude it and the score it would need."""

    def __init__(
        self, ctx: Context, memories: MemoriesService, keyword: KeywordRetriever, retrieval: Retrieval
    ) -> None:
        self.ctx = ctx
        self.memories = memories
        self.keyword = keyword
        self.retrieval = retrieval

    @property
    def index(self) -> KeywordIndex:
        """The store's keyword index (attached by the façade)."""
        return self.ctx.store.keyword

    def explain(self, request: SearchRequest, memory_id: int) -> Explanation:
        filters, k = request.filters, request.k
        q = clean(request.query)
        try:
            mem = self.memories.get(memory_id)
        except NotFound:
            return Explanation(
                q, int(memory_id) if str(memory_id).isdigit() else -1, False, False, k, "none", [], None, 0,
                None, None, [], [], None, None,
                f"There is no memory with id {memory_id}: it was never written, or it has been forgotten.",
            )  # fmt: skip
        # The same search, as an operator's: explaining never records access.
        result, fctx = self.retrieval.search_with_context(replace(request, query=q, record_access=False))
        excluded = filters.excludes(mem)
        if mem.absorbed_into:
            excluded.append(f"it was merged into memory {mem.absorbed_into}")
        everything = Filters(("core", "active", "archived"))
        p = self.keyword.plan(q)
        # Full keyword rank, among memories passing the filters (or all, if the filters exclude it).
        scope = everything if excluded else filters
        bm25_rank, matches = self._full_keyword_rank(p, mem.id, scope)
        matched, unmatched = self._term_matches(p, mem.id)
        vrank = vsim = None
        if self.ctx.embedder.ready and q.strip():
            if not mem.embedded:
                excluded.append("it has no vector yet (written while no model was loaded)")
            else:
                vrank, vsim = self.ctx.vectors.rank_of(self.retrieval.embed_query(q), mem.id, scope)
        hit = next((h for h in result.hits if h.id == mem.id), None)
        kth = result.hits[-1].score if len(result.hits) >= k else None
        final = hit.score if hit else self._would_score(result, fctx, mem, bm25_rank, vrank, filters, p)
        summary = _summarize(
            mem, hit is not None, k, result.mode, excluded, bm25_rank, matches, matched, unmatched,
            vrank, vsim, final, kth, p.index,
        )  # fmt: skip
        notes = self._keyword_scope(p, mem.id, matched)
        if notes and result.mode != "vector":
            summary += " " + " ".join(notes)
        if hit is not None and hit.breakdown.context > 0:
            summary += (
                f" Its session neighbours add {hit.breakdown.context:.4f} to its fused score"
                f" (session context)."
            )
        if hit is not None and hit.breakdown.boost != 1.0:
            named = fctx.named
            s = self.ctx.settings.search
            said = self.retrieval.said_of(mem.id, named) or fusion.Said()
            one = fusion.Named(speaker=named.speaker)
            what = [f"said by {named.speaker}"] if named.speaker and fusion.boost(one, said, s) != 1.0 else []
            dated = fusion.Named(month=named.month, year=named.year, day=named.day)
            if (named.month or named.year) and fusion.boost(dated, said, s) != 1.0:
                what.append(
                    "dated in the "
                    + ("month and year" if named.month and named.year else "month" if named.month else "year")
                    + (" (and day)" if named.day else "")
                    + " the query names"
                )
            if named.asks_when and said.timed:
                what.append("carrying a time expression, and the query asks when")
            summary += (
                f" Its fused score is multiplied by {hit.breakdown.boost:.2f} because the query names"
                f" whom or when: it is {' and '.join(what) or 'named'}."
            )
        return Explanation(
            query=q, memory_id=mem.id, found=True, in_top_k=hit is not None, k=k, mode=result.mode,
            excluded_by=excluded, bm25_rank=bm25_rank, bm25_matches=matches, vector_rank=vrank,
            vector_similarity=None if vsim is None else round(vsim, 6), matched_terms=matched,
            unmatched_terms=unmatched, final=None if final is None else round(final, 6), kth_final=kth,
            summary=summary, keyword_scope=notes,
        )  # fmt: skip

    def _keyword_scope(self, p: FtsPlan, memory_id: int, matched: list[str]) -> list[str]:
        """Plain sentences on the cost bounds a big database put on this keyword query."""
        out = []
        share = self.ctx.settings.search.common_term_share
        if p.dropped:
            words = ", ".join(f"{t} ({df:,} memories)" for t, df in p.dropped)
            out.append(
                f"Left out of the keyword query as too common to rank by (in more than "
                f"{share:.0%} of memories): {words}."
            )
        if p.recent_from is not None:
            common = {t for t, _ in p.windowed}
            words = ", ".join(f"{t} ({df:,} memories)" for t, df in p.windowed)
            rare = [t for t in p.terms if t not in common]
            out.append(
                f"Keyword search scored the commoner words {words} over the newest "
                f"memories only (ids above {p.recent_from:,})"
                + (f", and every memory for {', '.join(rare)}." if rare else ".")
            )
            if memory_id <= p.recent_from and matched:
                mine = [t for t in matched if t not in common]
                out.append(
                    f"This memory is older (id {memory_id:,}), so keyword search ranked it "
                    + (
                        f"on {', '.join(mine)} alone."
                        if mine
                        else "not at all: it has none of the rarer words."
                    )
                    + " The rank above is over every match."
                )
        return out

    def _full_keyword_rank(self, p: FtsPlan, memory_id: int, filters: Filters) -> tuple[int | None, int]:
        if p.index in ("none", "like"):
            return None, 0
        try:
            with self.ctx.store.reading() as conn:
                return self.index.rank_of(conn, fts_index(p), p.match or "", filters, memory_id)
        except Exception:
            return None, 0

    def _bm25_score(self, p: FtsPlan, memory_id: int) -> float:
        """The memory's BM25 for this query, negated like the keyword retriever's (higher is better)."""
        if p.index not in ("words", "trigram"):
            return 0.0
        try:
            with self.ctx.store.reading() as conn:
                b = self.index.score_of(conn, fts_index(p), p.match or "", memory_id)
        except Exception:
            return 0.0
        return -b if b is not None else 0.0

    def _term_matches(self, p: FtsPlan, memory_id: int) -> tuple[list[str], list[str]]:
        """Which query terms the memory's indexed tokens contain (asked of the index itself)."""
        matched: list[str] = []
        unmatched: list[str] = []
        trigram = p.index in ("trigram", "like")
        with self.ctx.store.reading() as conn:
            for t in p.terms[:32]:
                try:
                    if p.index == "like" or (trigram and len(t) < 3):
                        ok = self.index.contains(conn, memory_id, t)
                    else:
                        ok = self.index.has(conn, "trigram" if trigram else "words", quote(t), memory_id)
                except Exception:
                    ok = False
                (matched if ok else unmatched).append(t)
        return matched, unmatched

    def _would_score(
        self,
        result: SearchResult,
        fctx: fusion.FusionContext,
        mem: Memory,
        bm25_rank: int | None,
        vrank: int | None,
        filters: Filters | None = None,
        p: FtsPlan | None = None,
    ) -> float | None:
        """The final score the memory would get from its full ranks, to compare with the k-th hit."""
        if bm25_rank is None and vrank is None:
            return None
        s = self.ctx.settings.search
        kw = vec = None
        if bm25_rank and result.mode != "vector":
            kw = (bm25_rank, self._bm25_score(p or self.keyword.plan(result.query), mem.id))
        if vrank and result.mode != "keyword":
            q = self.retrieval.embed_query(result.query)
            vsim = self.ctx.vectors.similarities(q, [mem.id]).get(mem.id)
            vec = (vrank, vsim) if vsim is not None else None
        near = 0.0
        if result.mode == "hybrid" and s.session_context > 0 and filters is not None:
            near = self.retrieval.session_context(fctx.fused, filters, only={mem.id}).get(mem.id, 0.0)
        if kw is None and vec is None and not near:
            return None
        boost = self.retrieval.boost_of(mem.id, fctx) if result.mode == "hybrid" else 1.0
        fused = (fusion.one(fctx, s, kw, vec) * boost if kw or vec else 0.0) + near
        now = self.ctx.clock.now()
        r = self.ctx.store.query(lambda c: c.memories.row(mem.id))
        rec = fusion.recency(now, max(mem.created_at or 0, mem.last_accessed_at or 0), s)
        return fusion.weight(fused, self.memories.current_strength(r, now), mem.importance, rec, s)


def _summarize(
    mem, in_top, k, mode, excluded, bm25_rank, matches, matched, unmatched, vrank, vsim, final, kth, index
) -> str:
    parts: list[str] = []
    if in_top:
        parts.append(f"Memory {mem.id} is in the top {k} ({mode} search).")
    else:
        parts.append(f"Memory {mem.id} is not in the top {k} ({mode} search).")
    if excluded:
        parts.append("It is outside the searched set: " + "; ".join(excluded) + ".")
    if index == "none":
        parts.append("The query has no searchable words, so keyword search could not rank anything.")
    elif bm25_rank is not None:
        parts.append(
            f"Keyword search ranks it {bm25_rank:,} of {matches:,} matches"
            + (f" (matched: {', '.join(matched)})" if matched else "")
            + "."
        )
    else:
        why = (
            f"none of the query's words ({', '.join(unmatched[:8])}) occur in its text"
            if unmatched and not matched
            else "it does not match the keyword query"
        )
        parts.append(f"Keyword search does not find it: {why}.")
    if unmatched and matched:
        parts.append(f"Words it lacks: {', '.join(unmatched[:8])}.")
    if vrank is not None:
        parts.append(f"By meaning it ranks {vrank:,} (cosine similarity {vsim:.3f}).")
    elif mode == "keyword":
        parts.append("Vector search did not run (keyword-only mode).")
    if not in_top and final is not None and kth is not None:
        parts.append(f"Its final score would be {final:.4f}; the {k}th hit scored {kth:.4f}.")
    return " ".join(parts)
