"""Memories' vectors kept up: one memory's vector stored again, and the backfill that embeds what
was written while no model was loaded; and the in-batch near-duplicate test of the write path.
Split out of engine/memories.py (MemoriesService delegates here)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from engine.context import Context
    from engine.storage.port import Connection


class MemoryVectors:
    """The vector upkeep of the memories service (same context, same closing event)."""

    def __init__(self, ctx: Context, closing: threading.Event | None = None) -> None:
        self.ctx = ctx
        self.closing = closing  # set when the engine closes: a running backfill stops

    def embed_one(self, memory_id: int) -> None:
        """Store the vector of the memory's current text (no model: mark it pending)."""
        store = self.ctx.store
        emb = self.ctx.embedder.get()
        if emb is None:
            store.write(lambda c: c.memories.set_embedded(memory_id, False))
            return
        r = store.query(lambda c: c.memories.row(memory_id))
        vec = emb.embed([r["content"]])[0]
        store.write(lambda c: self.ctx.vectors.put(c, memory_id, vec, r))

    def pending(self) -> int:
        return self.ctx.store.query(lambda c: c.memory_queries.pending_count())

    def backfill(self, batch: int = 256, progress: Callable[[int], object] | None = None) -> int:
        """Embed memories written while no model was loaded. Returns how many were filled."""
        store = self.ctx.store
        emb = self.ctx.embedder.get()
        if emb is None:
            return 0
        done = 0
        while self.closing is None or not self.closing.is_set():
            rows = store.query(lambda c: c.memory_queries.pending(batch))
            if not rows:
                return done
            vecs = emb.embed([r["content"] for r in rows])

            def write(conn: Connection, rows: list[Any] = rows, vecs: np.ndarray = vecs) -> None:
                for r, v in zip(rows, vecs, strict=True):
                    cur = conn.memory_queries.content_of(r["id"])
                    if cur is not None and cur == r["content"]:  # skip rows edited meanwhile
                        self.ctx.vectors.put(conn, r["id"], v, r)

            store.write(write)
            done += len(rows)
            if progress:
                progress(len(rows))
        return done


def twin_in_batch(
    pairs: np.ndarray | None, fresh: dict[int, tuple[int, str | None]], i: int, agent: str, thr: float
) -> int | None:
    """The id of the first memory inserted earlier in this batch by the same agent whose cosine
    with item i reaches thr (`pairs`: the batch's cosine matrix), else None."""
    if pairs is None or not fresh:
        return None
    for j in np.flatnonzero(pairs[i, :i] >= thr):
        hit = fresh.get(int(j))
        if hit is not None and hit[1] == agent:
            return hit[0]
    return None
