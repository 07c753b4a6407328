"""The keyword retriever: BM25 over the store's keyword index, with its cost bounded on big databases.

The index scores every memory a query's words match (~1 µs each here), so a query's cost follows
how many memories contain its words, not how many hits it returns: at 1M memories one word in a
third of them costs ~0.3–0.6 s. What keeps it in hand (bench/keyword_bounds.py has the figures):

- a tier-only filter (the default) ranks by BM25 alone and filters the best few afterwards: no
  row lookup per match, about half the cost, and exactly the same top n;
- words more than `common_term_share` of the memories contain are left out (BM25 weighs them
  little), unless only such words are left — then the rarest stays;
- the words still kept are scored over every memory while their matches fit `keyword_rows`; the
  commoner rest is scored over the newest memories only (a window of ids sized to that budget),
  merged with the exact scan of the rarer words. A memory inside the window gets its exact BM25;
  one outside it is ranked on its rarer words alone. This bounds the tail (one very common word).

`explain` reports the last two whenever they shaped a query. State: the term statistics, made in
`KeywordRetriever.__init__` and refreshed by `term_stats`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.errors import EngineError
from engine.paths import is_server
from engine.retrieval.filters import Filters
from engine.retrieval.keyword_matrix import KeywordMatrix, give_back_memory, lexemes_of
from engine.retrieval.loading import Loader
from engine.retrieval.query import FtsPlan, plan, quote

if TYPE_CHECKING:
    from engine.context import Context
    from engine.storage.indexes import FtsIndex, KeywordIndex
    from engine.storage.port import Connection

STATS_TTL_S = 300.0
DF_CACHE_MAX = 50_000


@dataclass
class TermStats:
    """Memory count, tier counts and the id range, with the document frequencies read so far."""

    top_at_count: int  # max(id) when the counts were read
    n: int
    tiers: dict[str, int]
    at: float  # time.monotonic() of the count
    df: dict[str, int] = field(default_factory=dict)
    top: int = 0  # the id range, read fresh on every plan
    bottom: int = 0


def fts_index(p: FtsPlan) -> FtsIndex:
    """The keyword index a words or trigram plan runs on."""
    return "words" if p.index == "words" else "trigram"


class KeywordRetriever:
    """BM25 over the store's keyword index, bounded as described above. Keeps the term
    statistics of one engine (re-read as the database changes)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.stats: TermStats | None = None
        self.matrix: KeywordMatrix | None = None  # a long-lived engine's postings in memory
        self.searches = 0
        self.loader = Loader("keyword-matrix-load", self._load, lambda: self.matrix is not None)

    @property
    def index(self) -> KeywordIndex:
        """The store's keyword index (attached by the façade)."""
        return self.ctx.store.keyword

    def plan(self, text: str) -> FtsPlan:
        """The FTS plan for `text` with the bounds above applied. Document frequencies and tier
        counts are cached per engine (see term_stats)."""
        p = plan(text)
        s = self.ctx.settings.search
        if p.index != "words" or (self.matrix is not None and lexemes_of(p.terms) is not None):
            return p  # the matrix ranks every word over every match: nothing to bound
        stats = self.term_stats()
        if stats.n < min(s.common_terms_from, s.keyword_rows or stats.n + 1):
            return p
        with self.ctx.store.reading() as conn:
            df = {t: self.doc_freq(conn, t) for t in p.terms}
        keep = list(p.terms)
        dropped: list[tuple[str, int]] = []
        if s.common_term_share and len(keep) > 1 and stats.n >= s.common_terms_from:
            keep = [t for t in p.terms if df[t] <= s.common_term_share * stats.n]
            if not keep:  # every word is common: keep the rarest one
                keep = [min(p.terms, key=lambda t: df[t])]
            dropped = [(t, df[t]) for t in p.terms if t not in keep]
        windowed: list[tuple[str, int]] = []
        recent_from = None
        if s.keyword_rows:
            spent = 0
            for t in sorted(keep, key=lambda t: df[t]):
                if windowed or spent + df[t] > s.keyword_rows:
                    windowed.append((t, df[t]))
                else:
                    spent += df[t]
            if windowed:
                share = max(s.keyword_rows - spent, s.keyword_rows // 4) / sum(d for _, d in windowed)
                recent_from = self.window_floor(share, stats)
        if not dropped and recent_from is None:
            return p
        return FtsPlan(
            "words",
            " OR ".join(quote(x) for x in keep),
            (),
            tuple(keep),
            dropped=tuple(dropped),
            windowed=tuple(windowed),
            recent_from=recent_from,
        )

    @staticmethod
    def scope_notes(p: FtsPlan) -> list[str]:
        """One line each for the bounds that shaped plan `p` (explain gives the long form)."""
        out = []
        if p.dropped:
            out.append("left out as too common: " + ", ".join(t for t, _ in p.dropped))
        if p.recent_from is not None:
            out.append(
                f"scored over memories above id {p.recent_from:,} only: "
                + ", ".join(t for t, _ in p.windowed)
            )
        return out

    # -- the in-memory postings (engine/retrieval/keyword_matrix.py) ----------------------------------
    def keep_in_memory(self, background: bool = False) -> None:
        """Load every memory's postings and rank from them from now on. The load reads through its
        own connection; until it is done the store's index answers."""
        self.loader.start(background)

    def _load(self) -> None:
        store = self.ctx.store
        if not is_server(store.path) and not store.path.exists():
            return  # closed and removed meanwhile
        m = KeywordMatrix(self.index, store.feed)
        with store.vector_store.reader(store.path) as conn:
            m.load(conn)
        self.matrix = m
        give_back_memory()

    def note_search(self, after: int) -> None:
        """Count a keyword search; the `after`-th starts the load in the background (0: never)."""
        self.searches += 1
        if self.matrix is None and after and self.searches >= after:
            self.keep_in_memory(background=True)

    def _matrix_top(self, p: FtsPlan, filters: Filters, n: int) -> dict[int, float] | None:
        """The plan's top n from the matrix, caught up with the database first; None when there is
        no matrix, the plan was bounded, a word is a phrase, or this process is mid-write (that
        write may roll back: the store's index answers, as for vectors)."""
        m, store = self.matrix, self.ctx.store
        if m is None or p.index != "words" or p.dropped or p.recent_from is not None or store.in_write:
            return None
        lx = lexemes_of(p.terms)
        if lx is None:
            return None
        # The vector matrix holds every embedded memory's filter fields: candidates it knows are
        # checked against its masks, the rest (no vector yet) against the table.
        vm = self.ctx.vectors.live_matrix() if self.ctx.vectors.matrix is not None else None
        with store.reading() as conn:
            if not m.sync(conn, may_reload=False):  # too far behind: reload aside, the store answers
                self.matrix = None
                self.keep_in_memory(background=True)
                return None

            def passing(ids: list[int]) -> set[int]:
                if vm is None:
                    return self.index.passing(conn, ids, filters)
                ok, unknown = vm.passing(ids, filters)
                return ok | (self.index.passing(conn, unknown, filters) if unknown else set())

            return m.top(lx, n, passing)

    def term_stats(self) -> TermStats:
        """Memory count, tier counts and id range (the range read fresh, so windows follow new
        writes), with the document-frequency cache. All but the range are re-read when ids have
        moved by a tenth of the count or after STATS_TTL_S (decay and forget change tiers and
        counts without new ids); stale figures only shift where the bounds fall a little."""
        store = self.ctx.store
        cache = self.stats
        hi, lo = store.query(lambda c: c.memory_queries.id_range())
        if (
            cache is None
            or abs(hi - cache.top_at_count) > 0.1 * max(cache.n, 1)
            or time.monotonic() - cache.at > STATS_TTL_S
        ):
            tiers = store.query(lambda c: c.memory_queries.tier_counts())
            cache = self.stats = TermStats(hi, sum(tiers.values()), tiers, time.monotonic())
        cache.top, cache.bottom = hi, lo
        return cache

    def doc_freq(self, conn: Connection, term: str) -> int:
        """How many memories contain `term` (cached until the counts are re-read)."""
        cache = self.stats
        assert cache is not None, "term_stats() first"
        df = cache.df.get(term)
        if df is None:
            try:
                df = self.index.doc_freq(conn, quote(term))
            except EngineError:
                raise
            except Exception:
                df = 0
            if len(cache.df) > DF_CACHE_MAX:
                cache.df.clear()
            cache.df[term] = df
        return df

    @staticmethod
    def window_floor(share: float, stats: TermStats) -> int | None:
        """The memory id above which the newest `share` of the id range lies (None: all of it)."""
        if share >= 1:
            return None
        return int(stats.top - share * (stats.top - stats.bottom + 1))

    def ranks(self, p: FtsPlan, filters: Filters, n: int) -> dict[int, tuple[int, float]]:
        """{memory_id: (rank, BM25)} — the index's BM25 is lower-is-better; we report its negation."""
        if p.index == "none":
            return {}
        try:
            if p.index == "like":
                like = p.like
                ids = self.ctx.store.query(lambda c: c.memory_queries.like_ranked(like, filters, n))
                return {mid: (i + 1, 0.0) for i, mid in enumerate(ids)}
            got = self._matrix_top(p, filters, n)
            if got is not None:
                ranked = sorted(got.items(), key=lambda kv: (-kv[1], -kv[0]))[:n]
                return {mid: (i + 1, sc) for i, (mid, sc) in enumerate(ranked)}
            with self.ctx.store.reading() as conn:
                if p.recent_from is None:
                    scores = self._bm25_top(conn, fts_index(p), p.match or "", filters, n)
                else:
                    scores = self._windowed_scores(conn, p, filters, n)
        except EngineError:
            raise
        except Exception:  # a query FTS5 still refuses: no keyword hits, never an error
            return {}
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))[:n]
        return {mid: (i + 1, sc) for i, (mid, sc) in enumerate(ranked)}

    def _bm25_top(
        self,
        conn: Connection,
        index: FtsIndex,
        match: str,
        filters: Filters,
        n: int,
        above: int | None = None,
    ) -> dict[int, float]:
        """The n best memories by BM25 that pass `filters` (and have ids above `above`)."""
        # Tier counts as plan() last read them (it refreshes them): no queries per call.
        stats = self.stats or self.term_stats()
        share = sum(stats.tiers.get(t, 0) for t in filters.tiers) / max(stats.n, 1)
        if filters == Filters(filters.tiers) and share >= 0.3:
            # A tier-only filter that passes most memories: rank by BM25 alone (no row lookup
            # per match, half the cost at 1M), then filter the best few. When n of them pass
            # they are exactly the filtered top n — a prefix of the same order; else the join.
            over = min(int(2 * n / share) + 10, 20 * n)
            rows = self.index.top(conn, index, match, over, above)
            ok = self.index.passing(conn, [r[0] for r in rows], filters)
            kept = [(mid, -b) for mid, b in rows if mid in ok][:n]
            if len(kept) >= n or len(rows) < over:
                return dict(kept)
        return {mid: -b for mid, b in self.index.top_where(conn, index, match, filters, n, above)}

    def _windowed_scores(self, conn: Connection, p: FtsPlan, filters: Filters, n: int) -> dict[int, float]:
        """Rarer words over every memory, all kept words over the newest: the max of the two is
        each memory's exact BM25 inside the window and its rarer-word BM25 outside it. A window
        that a narrow filter leaves under n matches is widened (×4) until it has n or is whole."""
        common = {t for t, _ in p.windowed}
        rare = [t for t in p.terms if t not in common]
        index = fts_index(p)
        scores = self._bm25_top(conn, index, " OR ".join(quote(t) for t in rare), filters, n) if rare else {}
        stats = self.stats or self.term_stats()
        span = stats.top - stats.bottom + 1
        above: int | None = p.recent_from
        while True:
            recent = self._bm25_top(conn, index, p.match or "", filters, n, above)
            if len(recent) >= n or above is None:
                break
            share = min(1.0, 4 * (stats.top - above) / max(span, 1))
            above = self.window_floor(share, stats)
        for mid, sc in recent.items():
            scores[mid] = max(sc, scores.get(mid, sc))
        return scores
