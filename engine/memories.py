"""Memories: the write path (validation, embedding, near-duplicate reinforcement), reads, and the
operator's edits (pin, importance, tier, content). Every mutation is audited; rows are written
through the memories gateway (`conn.memories`) and read through the memory read model
(`conn.memory_queries`)."""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from engine import memory_access as access
from engine import memory_merged as merged
from engine.audit import log as audit
from engine.errors import Forgotten, InvalidInput, MergedAway, NotFound, cut
from engine.forget import tombstones
from engine.lifecycle.decay import strength_at
from engine.memory_access import query_fingerprint  # noqa: F401 - re-exported: callers import it from here
from engine.memory_bulk import MemoryOutcome
from engine.memory_bulk import apply as apply_bulk
from engine.memory_input import as_memory_id, check_text, normalize_item
from engine.memory_rows import row_to_memory
from engine.memory_vectors import MemoryVectors, twin_in_batch
from engine.storage.gateways.memories import NewMemory
from engine.types import TIERS, AddResult, Memory

if TYPE_CHECKING:
    from engine.context import Context
    from engine.storage.port import Connection


class MemoriesService:
    """The memories of the fleet: writes (validated, embedded, near-duplicates reinforced instead
    of stored twice), reads with current strength, and the operator's audited edits."""

    def __init__(self, ctx: Context, closing: threading.Event | None = None) -> None:
        self.ctx = ctx
        self.closing = closing  # set when the engine closes: a running backfill stops
        self.vector_upkeep = MemoryVectors(ctx, closing)

    # -- adding ----------------------------------------------------------------------------------
    def add(
        self,
        content: str,
        *,
        kind: str = "semantic",
        category: str = "general",
        tier: str = "active",
        agent: str = "",
        user: str = "",
        importance: float = 0.5,
        metadata: dict | None = None,
        session_id: str | None = None,
        message_id: int | None = None,
        pinned: bool = False,
        dedup: bool = True,
        reason: str = "",
    ) -> int:
        return self.add_ex(
            content, kind=kind, category=category, tier=tier, agent=agent, user=user,
            importance=importance, metadata=metadata, session_id=session_id,
            message_id=message_id, pinned=pinned, dedup=dedup, reason=reason,
        ).id  # fmt: skip

    def add_ex(self, content: str, *, dedup: bool = True, reason: str = "", **fields: Any) -> AddResult:
        """Like add, but also says whether a near-duplicate was reinforced instead."""
        return self.add_batch([{"content": content, **fields}], dedup=dedup, reason=reason)[0]

    def add_many(
        self,
        items: Iterable[dict],
        dedup: bool = True,
        reason: str = "",
        batch_size: int = 256,
        progress: Callable[[int], object] | None = None,
    ) -> builtins.list[int]:
        return [
            r.id
            for r in self.add_many_ex(
                items, dedup=dedup, reason=reason, batch_size=batch_size, progress=progress
            )
        ]

    def add_many_ex(
        self,
        items: Iterable[dict],
        dedup: bool = True,
        reason: str = "",
        batch_size: int = 256,
        progress: Callable[[int], object] | None = None,
    ) -> builtins.list[AddResult]:
        items = list(items)
        out: list[AddResult] = []
        # Batches are embedded then written in turn. Embedding the next batch on a thread while
        # one is written was tried: no gain on 2 cores (124 vs 128/s), the writer steals torch's.
        for start in range(0, len(items), batch_size):
            chunk = items[start : start + batch_size]
            out.extend(self.add_batch(chunk, dedup=dedup, reason=reason))
            if progress:
                progress(len(chunk))
        return out

    def add_batch(self, items: builtins.list[dict], *, dedup: bool, reason: str) -> builtins.list[AddResult]:
        """One batch: validated first, embedded together, written in one transaction."""
        ctx = self.ctx
        norm = [normalize_item(i) for i in items]  # validate everything before writing
        emb = ctx.embedder.require() if ctx.embedder.state != "none" else None
        vecs = emb.embed([n["content"] for n in norm]) if emb else None
        now = ctx.clock.now()
        thr = ctx.settings.search.dedup_threshold
        vectors = ctx.vectors
        if vecs is not None and vecs.shape[1] != vectors.tag().dim:  # the store switched models
            vectors.follow_model(ctx.embedder)  # (a reembed elsewhere): written without a vector,
            vecs = None  # embedded by the next backfill with the store's model (issue #26)
        if dedup and vecs is not None:  # big batches check duplicates in memory, all at once
            vectors.prepare_batch(len(norm), ctx.settings.search.dedup_matrix_from)

        def write(conn: Connection) -> list[AddResult] | None:
            if dedup:  # concurrent writers: one agent's duplicate checks take turns (a server)
                conn.memories.lock_for_dedup(n["agent"] for n in norm)
            gone = tombstones.any_forgotten(conn, [n["content"] for n in norm])
            if gone:  # text a forget removed is never remembered again, whatever the door
                for i in gone:
                    audit.append(
                        conn, at=now, actor=ctx.actor, action="remember-refused", target_kind="memory",
                        reason=reason, summary={"agent": norm[i]["agent"], "why": "forgotten"},
                    )  # fmt: skip
                return None
            results: list[AddResult] = []
            # In-batch dedup: every pair's cosine in one product (a Python loop of np.dot over
            # the batch's earlier inserts cost ~0.2 ms an item), and the ids inserted so far.
            pairs = vecs @ vecs.T if dedup and vecs is not None else None
            fresh: dict[int, tuple[int, str | None]] = {}  # batch index -> (id, agent)
            near = (
                vectors.best_matches(conn, vecs, [n["agent"] for n in norm])
                if dedup and vecs is not None
                else None
            )
            for i, n in enumerate(norm):
                vec = vecs[i] if vecs is not None else None
                dup = None
                if dedup:
                    dup = twin_in_batch(pairs, fresh, i, n["agent"], thr)
                    if dup is None:
                        dup = self._find_duplicate(conn, n, vec, thr, near[i] if near else None)
                if dup is not None:
                    self.reinforce_in(
                        conn, [dup], now, action="reinforce", reason=reason or "near-duplicate added"
                    )
                    results.append(AddResult(dup, True))
                    continue
                created = float(n["created_at"]) if n["created_at"] is not None else now
                mid = conn.memories.insert(n, created=created, now=now, embedded=vec is not None)
                if vec is not None:  # filter fields as inserted: no read of the row back (#24)
                    vectors.put(conn, mid, vec, n, marked=True)
                    fresh[i] = (mid, n["agent"])
                audit.append(
                    conn, at=now, actor=ctx.actor, action="add", target_kind="memory", target_id=mid,
                    reason=reason,
                    summary={"kind": n["kind"], "category": n["category"], "tier": n["tier"],
                             "agent": n["agent"], "preview": audit.preview(n["content"])},
                )  # fmt: skip
                results.append(AddResult(mid, False))
            return results

        done = ctx.store.write(write)
        if done is None:
            raise Forgotten("not remembered: a forget removed this text (its tombstone matches)")
        return done

    def _find_duplicate(
        self,
        conn: Connection,
        n: NewMemory,
        vec: np.ndarray | None,
        thr: float,
        near: tuple[int | None, float] | None,
    ) -> int | None:
        """A stored memory `n` repeats. `near`: (id, similarity) of the closest stored memory of
        the same agent (batched)."""
        if vec is None:  # keyword-only engine: exact text is the only safe duplicate test
            return conn.memory_queries.same_text(n["content"], n["agent"])
        if near is not None and near[0] is not None and near[1] >= thr:
            return near[0]
        return None

    # -- strength and reinforcement ----------------------------------------------------------------
    def reinforce_in(
        self,
        conn: Connection,
        ids: Iterable[int],
        now: float,
        *,
        action: str,
        reason: str = "",
        count_access: bool = True,
    ) -> None:
        """Inside the caller's write: raise strength (bounded at 1) from its current decayed value
        and reset the anchor, audited as `action` (search access, gate, duplicate...)."""
        boost = self.ctx.settings.decay.reinforce_boost
        for asked in ids:
            first = conn.memories.row(asked)
            r = merged.survivor_row(conn, first)  # a merge absorbed it: the survivor is reinforced
            if r is None:
                continue
            mid = int(r["id"])
            before = self.current_strength(r, now)
            after = min(1.0, before + boost)
            conn.memories.reinforce(mid, after, now, count_access=count_access)
            summary: dict[str, Any] = {"strength": [round(before, 3), round(after, 3)]}
            if mid != asked:
                summary["asked_for"] = asked  # merged into this one
            audit.append(
                conn, at=now, actor=self.ctx.actor, action=action, target_kind="memory", target_id=mid,
                reason=reason, summary=summary,
            )  # fmt: skip

    def record_access(
        self, conn: Connection, ids: Iterable[int], now: float, *, query: str, agent: str | None, reason: str
    ) -> None:
        """Inside the caller's write: a recall's access to its hits (engine/memory_access.py)."""
        access.record_access(self, conn, ids, now, query=query, agent=agent, reason=reason)

    def current_strength(self, r: Any, now: float | None = None) -> float:
        """Closed form (engine/decay.py) of a memory row; core and pinned hold their anchor."""
        if r["pinned"] or r["tier"] == "core":
            return float(r["anchor_strength"])
        now = self.ctx.clock.now() if now is None else now
        rate = self.ctx.settings.decay.rate(r["kind"])
        return strength_at(r["anchor_strength"], r["last_reinforced_at"] or 0.0, rate, now)

    def decay_restart(self, memory_id: int) -> dict[str, Any]:
        """Column changes that make a memory decay from now (unpinned, restored, out of core).

        It keeps the strength it holds now; a memory restored from the archive is lifted to the
        threshold plus one reinforcement, so the next decay pass does not archive it straight back.
        """
        r = self.ctx.store.query(lambda c: c.memories.row(int(memory_id)))
        if r is None:
            return {}
        now = self.ctx.clock.now()
        held = self.current_strength(r, now)
        if r["tier"] == "archived":
            ds = self.ctx.settings.decay
            held = min(1.0, max(held, ds.archive_threshold) + ds.reinforce_boost)
        return {"anchor_strength": held, "strength": held, "last_reinforced_at": now, "archive_at": None}

    def reinforce(self, memory_id: int, reason: str = "") -> Memory:
        """Reinforce a memory; one a merge absorbed reinforces its survivor (returned)."""
        mem = self.get(memory_id)
        self.ctx.store.write(
            lambda c: self.reinforce_in(c, [mem.id], self.ctx.clock.now(), action="reinforce", reason=reason)
        )
        landed = self.ctx.store.query(lambda c: merged.survivor_row(c, c.memories.row(mem.id)))
        return self.get(int(landed["id"]) if landed is not None else mem.id)

    # -- reads ---------------------------------------------------------------------------------------
    def get(self, memory_id: int) -> Memory:
        mid = as_memory_id(memory_id)
        r = self.ctx.store.query(lambda c: c.memories.row(mid))
        if r is None:
            raise NotFound(f"no memory with id {memory_id}")
        return self._with_strength(r)

    def _with_strength(self, r: Any) -> Memory:
        """A Memory whose strength is current (closed form), not the stored snapshot."""
        m = row_to_memory(r)
        m.strength = self.current_strength(r)
        return m

    def from_message(self, message_id: int) -> builtins.list[Memory]:
        rows = self.ctx.store.query(lambda c: c.memory_queries.from_message(message_id))
        return [row_to_memory(r) for r in rows]

    def list(
        self,
        *,
        tier: str | None = None,
        agent: str | None = None,
        session_id: str | None = None,
        limit: int = 500,
    ) -> builtins.list[Memory]:
        rows = self.ctx.store.query(
            lambda c: c.memory_queries.listed(tier=tier, agent=agent, session_id=session_id, limit=int(limit))
        )
        return [self._with_strength(r) for r in rows]

    # -- operator edits ---------------------------------------------------------------------------------
    def _update(self, memory_id: int, action: str, changes: dict[str, Any], reason: str) -> Memory:
        before = self.get(memory_id)
        now = self.ctx.clock.now()

        def write(conn: Connection) -> int | None:
            # Read inside the write: a merge applied since `before` was read is caught here.
            survivor = merged.refused(self.ctx, conn, conn.memories.row(before.id), action, now, reason)
            if survivor is not None:
                return survivor
            conn.memories.update(before.id, changes, now)
            summary = {c: [getattr(before, c, None), v] for c, v in changes.items() if c != "content"}
            if "content" in changes:
                summary["content"] = [audit.preview(before.content), audit.preview(changes["content"])]
            audit.append(
                conn, at=now, actor=self.ctx.actor, action=action, target_kind="memory", target_id=before.id,
                reason=reason, summary=summary,
            )  # fmt: skip
            return None

        survivor = self.ctx.store.write(write)
        if survivor is not None:
            raise MergedAway(before.id, survivor, action)
        return self.get(before.id)

    def pin(self, memory_id: int, reason: str = "") -> Memory:
        return self._update(memory_id, "pin", {"pinned": 1}, reason)

    def unpin(self, memory_id: int, reason: str = "") -> Memory:
        # Decay resumes from now at the strength it held, not from its last reinforcement.
        return self._update(memory_id, "unpin", {"pinned": 0, **self.decay_restart(memory_id)}, reason)

    def set_importance(self, memory_id: int, importance: float, reason: str = "") -> Memory:
        try:
            imp = float(importance)
        except (TypeError, ValueError):
            raise InvalidInput(
                f"importance must be a number between 0 and 1, not {cut(importance)}"
            ) from None
        if not 0.0 <= imp <= 1.0:
            raise InvalidInput(f"importance must be between 0 and 1, not {imp}")
        return self._update(memory_id, "set-importance", {"importance": imp}, reason)

    def set_tier(self, memory_id: int, tier: str, reason: str = "") -> Memory:
        if tier not in TIERS:
            raise InvalidInput(f"unknown tier {cut(tier)}; use one of {', '.join(TIERS)}")
        action = {"archived": "archive", "active": "restore", "core": "promote-core"}[tier]
        changes: dict[str, Any] = {"tier": tier}
        if tier == "active":  # restored or demoted from core: decay restarts now
            changes.update(self.decay_restart(memory_id))
        return self._update(memory_id, action, changes, reason)

    def archive(self, memory_id: int, reason: str = "") -> Memory:
        return self.set_tier(memory_id, "archived", reason)

    # -- marked rows at once: one transaction, one audit row per memory changed ------------------------
    def archive_many(self, ids: Iterable[int], reason: str = "") -> builtins.list[MemoryOutcome]:
        """Archive every id; per id: done, unchanged (already archived) or missing."""
        return apply_bulk(self.ctx, builtins.list(ids), "archive", reason)

    def pin_many(self, ids: Iterable[int], reason: str = "") -> builtins.list[MemoryOutcome]:
        """Pin every id; per id: done, unchanged (already pinned) or missing."""
        return apply_bulk(self.ctx, builtins.list(ids), "pin", reason)

    def restore(self, memory_id: int, reason: str = "") -> Memory:
        """An archived memory back to active (audited "restore"); decay restarts above the threshold.
        Refused for one that is not archived, or that a merge absorbed (undo the merge instead)."""
        mem = self.get(memory_id)
        if mem.absorbed_into is not None:  # refused (and audited) by the write itself
            return self.set_tier(mem.id, "active", reason)
        if mem.tier != "archived":
            raise InvalidInput(f"memory {mem.id} is not archived (tier {mem.tier}); nothing to restore")
        return self.set_tier(mem.id, "active", reason)

    def edit(self, memory_id: int, content: str, reason: str = "") -> Memory:
        content = check_text(content, "content")
        # Pending until the new vector is in: a crash before that must not leave the old
        # text's vector marked current.
        mem = self._update(memory_id, "edit", {"content": content, "embedded": 0}, reason)
        self.embed_one(mem.id)
        return self.get(mem.id)

    # -- vectors (engine/memory_vectors.py) ------------------------------------------------------------
    def embed_one(self, memory_id: int) -> None:
        """Store the vector of the memory's current text (no model: mark it pending)."""
        self.vector_upkeep.embed_one(memory_id)

    def pending_vectors(self) -> int:
        return self.vector_upkeep.pending()

    def backfill_vectors(self, batch: int = 256, progress: Callable[[int], object] | None = None) -> int:
        """Embed memories written while no model was loaded. Returns how many were filled."""
        return self.vector_upkeep.backfill(batch, progress)
