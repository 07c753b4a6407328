"""Re-embedding a store with another registered model (issue #26), in the background, resumable.

How: the new vectors go to `vector_staging` (any width, not searched) in small batches, each its
own write, so search keeps using the old vectors meanwhile and an interruption (Ctrl-C, kill -9, a
crash) loses at most one batch: running again embeds only memories without a staged vector. A
memory deleted or edited meanwhile loses its staged vector (schema triggers) and is embedded
again; memories added meanwhile are picked up by the last pass. When every memory has one, one
write switches: the vector store is rebuilt from the staged vectors at the new width, the store's
model tag (tag.py) names the new model, staging is emptied, all audited (reembed-start,
reembed-switch, reembed-cancel). Processes holding the old model follow the tag (the engine's
embedder loads the new model; search is keyword-only, saying so, until it is ready).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.audit import log as audit
from engine.embedding import registry
from engine.embedding import tag as model_tag
from engine.errors import EngineError, InvalidInput

if TYPE_CHECKING:
    from engine.context import Context
    from engine.embed import Embedder
    from engine.storage.port import Connection

BATCH = 64  # memories per staged write: an interruption loses at most this many embeddings
SWITCH_EMBEDS_AT_MOST = 256  # left over at the switch (added meanwhile): embedded inside its write

Progress = Callable[[int, int], object]  # (staged, total)


@dataclass(frozen=True)
class ReembedStatus:
    model: str  # what search reads now
    dim: int
    target: str | None  # the reembed in progress, if any
    target_dim: int | None
    staged: int  # memories with a vector of the target model
    total: int  # memories
    since: float | None
    by: str
    state: str  # "none" | "pending" (staged, not switched) | "switched" | "interrupted"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Reembed:
    """`eng.embedding`: the registry, the store's model and reembedding it."""

    def __init__(self, ctx: Context, closing: threading.Event | None = None) -> None:
        self.ctx = ctx
        self.closing = closing
        self._job: threading.Thread | None = None

    # -- reading -------------------------------------------------------------------------------------
    def models(self) -> list[dict[str, Any]]:
        """The registered models an operator may choose, the store's own marked."""
        active = self.ctx.vectors.tag(fresh=True).model
        return [{**m.describe(), "active": m.id == active} for m in registry.models()]

    def status(self, state: str | None = None) -> ReembedStatus:
        def read(c: Connection) -> ReembedStatus:
            t, job = model_tag.read(c), model_tag.pending(c)
            staged = c.vector_staging.count() if job else 0
            total = (
                staged + c.vector_staging.missing_count()
                if job
                else sum(c.memory_queries.counts()[0].values())
            )
            return ReembedStatus(
                t.model, t.dim, job.model if job else None, job.dim if job else None, staged, int(total),
                job.since if job else None, job.by if job else "", state or ("pending" if job else "none"),
            )  # fmt: skip

        return self.ctx.store.query(read)

    # -- starting, cancelling ---------------------------------------------------------------------------
    def start(self, model_id: str) -> ReembedStatus:
        """Record a reembed to `model_id` (audited). Resuming the same one keeps what is staged;
        naming another model drops the staged vectors of the first."""
        spec = registry.model(model_id)
        now, actor = self.ctx.clock.now(), self.ctx.actor

        def write(c: Connection) -> None:
            t, job = model_tag.read(c), model_tag.pending(c)
            if job is not None and job.model == spec.id:
                return  # resuming
            if job is None and t.model == spec.id:
                raise InvalidInput(f"the store's vectors are already {spec.id}: nothing to re-embed")
            if job is not None:
                c.vector_staging.clear()
            model_tag.put_pending(c, model_tag.PendingReembed(spec.id, spec.dim, now, actor))
            audit.append(c, at=now, actor=actor, action="reembed-start", target_kind="embedding",
                         target_id=spec.id, summary={"from": t.model, "to": spec.id, "dim": spec.dim,
                                                     "replaced": job.model if job else None})  # fmt: skip

        self.ctx.store.write(write)
        return self.status()

    def cancel(self) -> ReembedStatus:
        """Give up the reembed in progress: staged vectors dropped, search unchanged (audited)."""
        now, actor = self.ctx.clock.now(), self.ctx.actor

        def write(c: Connection) -> None:
            job = model_tag.pending(c)
            if job is None:
                raise InvalidInput("no reembed is in progress")
            c.vector_staging.clear()
            self.ctx.vectors.backend.drop_prepared(c)
            model_tag.put_pending(c, None)
            audit.append(c, at=now, actor=actor, action="reembed-cancel", target_kind="embedding",
                         target_id=job.model)  # fmt: skip

        self.ctx.store.write(write)
        return self.status()

    # -- running --------------------------------------------------------------------------------------
    def run(
        self,
        model_id: str | None = None,
        *,
        batch: int = BATCH,
        progress: Progress | None = None,
        stop: threading.Event | None = None,
    ) -> ReembedStatus:
        """Embed every memory without a staged vector with the target model, then switch. With no
        `model_id`, resumes the reembed in progress. Returns with state "interrupted" when `stop`
        (or the engine closing) is set between batches: run again to resume."""
        if model_id is None:
            job = self.ctx.store.query(model_tag.pending)
            if job is None:
                raise InvalidInput("no reembed is in progress: name a model (--model ID)")
            model_id = job.model
        spec = registry.model(model_id)
        self.start(spec.id)
        from engine.embedding.load import load

        emb = load(spec, self.ctx.settings.model_path)
        store = self.ctx.store
        if not 1 <= int(batch) <= 4096:
            raise InvalidInput("batch must be between 1 and 4096")

        def stopped() -> bool:
            return bool((stop and stop.is_set()) or (self.closing and self.closing.is_set()))

        st = self.status()
        staged, total = st.staged, st.total
        if progress:
            progress(staged, total)
        while True:
            if stopped():
                return self.status("interrupted")
            rows = store.query(lambda c: c.vector_staging.missing(int(batch)))
            if not rows:
                break
            vecs = emb.embed([text for _, text in rows])

            def stage(c: Connection, rows: list[tuple[int, str]] = rows, vecs: np.ndarray = vecs) -> int:
                return self._stage(c, spec.id, rows, vecs)

            staged += store.write(stage)
            if progress:
                progress(staged, max(total, staged))
        # Built ahead, outside the switch (PostgreSQL: the new table and its HNSW index): the
        # switch's write then only catches up and swaps, so writers wait for no index build.
        self.ctx.vectors.backend.prepare_switch(store.write, spec.dim)
        switched = store.write(lambda c: self._switch(c, spec, emb))
        with contextlib.suppress(EngineError):  # a check only: the switch is done either way
            self.ctx.vectors.backend.after_switch(store.write)
        self.ctx.vectors.tag(fresh=True)
        self.ctx.vectors.matrix = None  # the old model's vectors: reloaded on demand
        self.ctx.embedder.follow(self.ctx.vectors.tag())
        st = self.status("switched")
        if progress:
            progress(switched, switched)
        return st

    def run_in_background(self, model_id: str | None = None, **kw: Any) -> threading.Thread:
        """`run` in a thread of its own (as the caller: the audit names them); the thread's result
        or error is kept on it (`.result`, `.error`). One at a time per engine."""
        if self._job is not None and self._job.is_alive():
            raise EngineError("a reembed is already running in this process")
        ctx = contextvars.copy_context()
        t = threading.Thread(
            target=lambda: ctx.run(self._background, t, model_id, kw), name="reembed", daemon=True
        )
        self._job = t
        t.start()
        return t

    def _background(self, t: threading.Thread, model_id: str | None, kw: dict[str, Any]) -> None:
        try:
            t.result = self.run(model_id, **kw)  # type: ignore[attr-defined]
            t.error = None  # type: ignore[attr-defined]
        except Exception as exc:  # the caller shows it: one line
            t.result, t.error = None, exc  # type: ignore[attr-defined]

    # -- inside writes ------------------------------------------------------------------------------------
    @staticmethod
    def _still(c: Connection, model: str) -> None:
        job = model_tag.pending(c)
        if job is None or job.model != model:
            raise EngineError(f"the reembed to {model} was cancelled or replaced meanwhile")

    def _stage(self, c: Connection, model: str, rows: list[tuple[int, str]], vecs: np.ndarray) -> int:
        self._still(c, model)
        # A text edited since it was read keeps no stale vector: it stays missing for the next pass.
        keep = [
            (mid, np.asarray(v, dtype=np.float32).tobytes())
            for (mid, text), v in zip(rows, vecs, strict=True)
            if c.memory_queries.content_of(mid) == text
        ]
        c.vector_staging.put_many(keep)
        return len(keep)

    def _switch(self, c: Connection, spec: registry.ModelSpec, emb: Embedder) -> int:
        self._still(c, spec.id)
        left = c.vector_staging.missing(SWITCH_EMBEDS_AT_MOST + 1)
        if len(left) > SWITCH_EMBEDS_AT_MOST:
            raise EngineError(f"{len(left)}+ memories were added during the reembed: run it again to finish")
        if left:  # added since the last pass: few, embedded here so nothing is left behind
            vecs = emb.embed([text for _, text in left])
            c.vector_staging.put_many(
                [
                    (mid, np.asarray(v, dtype=np.float32).tobytes())
                    for (mid, _), v in zip(left, vecs, strict=True)
                ]
            )
        old = model_tag.read(c)
        c.memories.mark_all_embedded()  # rows of memories first, then the vector table: writers' order
        n = self.ctx.vectors.backend.switch(c, spec.dim)
        c.vector_staging.clear()
        model_tag.put(c, spec.id, spec.dim)
        model_tag.put_pending(c, None)
        audit.append(c, at=self.ctx.clock.now(), actor=self.ctx.actor, action="reembed-switch",
                     target_kind="embedding", target_id=spec.id,
                     summary={"from": old.model, "to": spec.id, "dim": spec.dim, "vectors": n})  # fmt: skip
        return n
