"""What raises a fused candidate beyond its retrievers' scores: the speaker, day or time its
query names (named boosts) and well-scored turns next to it in its session (session context).
Retrieval (search.py) composes this with the retrievers and the state weighting; explain reads
the same methods, so a breakdown and a search always agree."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from engine.retrieval import fusion
from engine.retrieval.filters import Filters
from engine.retrieval.query import asks_when, content_terms, named_day, named_one, named_time
from engine.types import load_json

if TYPE_CHECKING:
    from engine.context import Context


class NamedAndNear:
    """Named boosts and session context over the store's rows (`self.ctx`: the engine's context)."""

    ctx: Context

    def named_boosts(
        self, query: str, fused: dict[int, float], fctx: fusion.FusionContext, read: dict[int, Any]
    ) -> dict[int, float]:
        """{memory_id: factor != 1} for the candidates said by the speaker the query names, dated
        in the month / year (and day) it names, or carrying a time expression when it asks when
        (fusion.boost); records what was named in fctx. Without metadata a memory's speaker is its
        leading "Name:" and its date created_at (engine/retrieval/derived.py). The rows it reads
        carry the weighting columns too, kept in `read` so fuse() need not read them again."""
        s = self.ctx.settings.search
        if not (s.speaker_boost or s.date_boost or s.time_boost) or not fused:
            return {}
        month, year = named_time(query) if s.date_boost else (None, None)
        timed = bool(month or year)
        day = named_day(query) if month else None
        when_q = bool(s.time_boost) and asks_when(query)
        # A speaker the query names is one of its words: a candidate naming none is not checked.
        words = [w for w in content_terms(query) if len(w) > 1] if s.speaker_boost else []
        probe = fusion.Named("?" if words else None, month, year, day, when_q)
        meta: dict[int, fusion.Said] = {}
        cands = list(fused)
        rows = self.ctx.store.query(lambda c: c.memory_queries.weighting(cands, metadata=True))
        if not (timed or when_q):
            # Only a speaker can be named (most recalls): each candidate's speaker alone, its
            # Said made only if the query names one of them — what fusion.said gives for this
            # probe, without ~128 Said objects per recall (issue #24).
            said_by: dict[int, str | None] = {}
            for r in rows:
                mid = int(r["id"])
                read[mid] = r
                if not words:
                    said_by[mid] = None
                    continue
                text = r["metadata"] or ""
                low = text.lower()
                sure = '"speaker"' in low or any(w in low for w in words)
                md = load_json(text) if sure and text not in ("", "{}") else {}
                said_by[mid] = fusion.speaker_of(md, r["head"] or "", r["role"])
            n = fusion.Named(named_one(query, {v for v in said_by.values() if v}), month, year, day, when_q)
            fctx.named = n
            if not n:
                return {}
            meta = {m: fusion.Said(sp) for m, sp in said_by.items()}
        else:
            for r in rows:
                read[int(r["id"])] = r
                text = r["metadata"] or ""
                low = text.lower()
                head = r["head"] or ""
                sure = timed or '"speaker"' in low or any(w in low for w in words)
                md = load_json(text) if sure and text not in ("", "{}") else {}
                meta[int(r["id"])] = fusion.said(md, head, r["created_at"], probe, r["role"])
            speakers = {m.speaker for m in meta.values() if m.speaker}
            n = fusion.Named(named_one(query, speakers), month, year, day, when_q)
            fctx.named = n
            if not n:
                return {}
        out = {m: fusion.boost(n, said, s) for m, said in meta.items()}
        return {m: f for m, f in out.items() if f != 1.0}

    def said_of(self, memory_id: int, named: fusion.Named) -> fusion.Said | None:
        """Who said one memory and when, as the boosts for `named` read it (None: no such memory)."""
        r = self.ctx.store.query(lambda c: c.memory_queries.boost_fields(memory_id))
        if r is None:
            return None
        return fusion.said(load_json(r["metadata"]), r["head"], r["created_at"], named, r["role"])

    def boost_of(self, memory_id: int, fctx: fusion.FusionContext) -> float:
        """fusion.boost for one memory against what a search's query named (explain's path)."""
        said = self.said_of(memory_id, fctx.named) if fctx.named else None
        return fusion.boost(fctx.named, said, self.ctx.settings.search) if said is not None else 1.0

    def session_context(
        self, fused: dict[int, float], filters: Filters, only: Collection[int] | None = None
    ) -> dict[int, float]:
        """{memory_id: share of its session neighbours' fused scores}. The memories written just
        before and after a well-scored memory in the same session (passing the same filters), and
        with search.session_reach = 2 the next ones out (in a dialogue, the same speaker's turns
        either side), get SearchSettings.session_context x its score: in a conversation the answer
        is often a turn or two from the one that shares the question's words. `only`: score just
        these ids."""
        s = self.ctx.settings.search
        beta = s.session_context
        cands = [m for m, v in fused.items() if v > 0]
        if not cands:
            return {}
        rows = self.ctx.store.query(lambda c: c.memory_queries.session_neighbours(cands, filters))
        ring = {int(mid): (before, after) for mid, before, after in rows}
        outer: dict[int, tuple[Any, Any]] = {}
        if s.session_reach > 1:  # the turns one further out: the neighbours' own neighbours
            outer = ring  # a neighbour that is a candidate too: already read
            nbs = list({int(nb) for pair in ring.values() for nb in pair if nb is not None} - ring.keys())
            if nbs:
                got = self.ctx.store.query(lambda c: c.memory_queries.session_neighbours(nbs, filters))
                outer = {**ring, **{int(mid): (before, after) for mid, before, after in got}}
        out: dict[int, float] = {}
        for mid, (before, after) in ring.items():
            reach = [before, after]
            if before is not None and int(before) in outer:
                reach.append(outer[int(before)][0])
            if after is not None and int(after) in outer:
                reach.append(outer[int(after)][1])
            for nb in reach:
                if nb is not None and (only is None or nb in only):
                    out[int(nb)] = out.get(int(nb), 0.0) + beta * fused[mid]
        return out
