"""Memories: the write path (validation, embedding, near-duplicate reinforcement), reads, and the
operator's edits (pin, importance, tier, content). Every mutation is audited."""
from __future__ import annotations

import json
import math
from typing import Any, Iterable

import numpy as np

from . import audit
from .errors import InvalidInput, NotFound
from .filters import Filters
from .types import KINDS, TIERS, AddResult, Memory, load_json

MAX_CONTENT = 1_000_000
_FIELDS = ("content", "kind", "category", "tier", "agent", "user", "importance", "metadata",
           "session_id", "message_id", "pinned", "created_at")


def check_text(value: Any, what: str, *, allow_empty: bool = False, limit: int = MAX_CONTENT) -> str:
    """Refuse what cannot be stored faithfully: non-strings, lone surrogates, NULs, oversize."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be text, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{what} contains a lone surrogate (not valid Unicode text)") from None
    if "\x00" in value:
        raise InvalidInput(f"{what} contains a NUL character")
    if not allow_empty and not value.strip():
        raise InvalidInput(f"{what} is empty")
    if len(value) > limit:
        raise InvalidInput(f"{what} is {len(value):,} characters; the limit is {limit:,}")
    return value


def normalize_item(item: dict) -> dict:
    unknown = set(item) - set(_FIELDS) - {"dedup"}
    if unknown:
        raise InvalidInput(f"unknown memory field(s): {', '.join(sorted(unknown))}")
    out = {
        "content": check_text(item.get("content"), "content"),
        "kind": item.get("kind") or "semantic",
        "category": item.get("category") or "general",
        "tier": item.get("tier") or "active",
        "agent": check_text(item.get("agent") or "", "agent", allow_empty=True, limit=200),
        "user": check_text(item.get("user") or "", "user", allow_empty=True, limit=200),
        "metadata": item.get("metadata") or {},
        "session_id": item.get("session_id"),
        "message_id": item.get("message_id"),
        "pinned": 1 if item.get("pinned") else 0,
        "created_at": item.get("created_at"),
    }
    if out["kind"] not in KINDS:
        raise InvalidInput(f"unknown kind {out['kind']!r}; use one of {', '.join(KINDS)}")
    if out["tier"] not in TIERS:
        raise InvalidInput(f"unknown tier {out['tier']!r}; use one of {', '.join(TIERS)}")
    check_text(out["category"], "category", limit=64)
    imp = item.get("importance", 0.5)
    try:
        imp = float(0.5 if imp is None else imp)
    except (TypeError, ValueError):
        raise InvalidInput(f"importance must be a number between 0 and 1, not {imp!r}") from None
    if not (0.0 <= imp <= 1.0) or math.isnan(imp):
        raise InvalidInput(f"importance must be between 0 and 1, not {imp}")
    out["importance"] = imp
    if not isinstance(out["metadata"], dict):
        raise InvalidInput("metadata must be a JSON object")
    try:
        out["metadata_json"] = json.dumps(out["metadata"], ensure_ascii=False)
        out["metadata_json"].encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise InvalidInput(f"metadata is not valid JSON text ({exc})") from None
    return out


def row_to_memory(r) -> Memory:
    return Memory(
        id=r["id"], content=r["content"], kind=r["kind"], category=r["category"], tier=r["tier"],
        agent=r["agent"], user=r["user"], importance=r["importance"], strength=r["strength"],
        access_count=r["access_count"], created_at=r["created_at"],
        last_accessed_at=r["last_accessed_at"], last_reinforced_at=r["last_reinforced_at"],
        pinned=bool(r["pinned"]), session_id=r["session_id"], message_id=r["message_id"],
        metadata=load_json(r["metadata"]), absorbed_into=r["absorbed_into"],
        embedded=bool(r["embedded"]))


class MemoriesMixin:
    # -- adding ----------------------------------------------------------------------------------
    def add_memory(self, content: str, *, kind: str = "semantic", category: str = "general",
                   tier: str = "active", agent: str = "", user: str = "", importance: float = 0.5,
                   metadata: dict | None = None, session_id: str | None = None,
                   message_id: int | None = None, pinned: bool = False, dedup: bool = True,
                   reason: str = "") -> int:
        return self.add_memory_ex(content, kind=kind, category=category, tier=tier, agent=agent,
                                  user=user, importance=importance, metadata=metadata,
                                  session_id=session_id, message_id=message_id, pinned=pinned,
                                  dedup=dedup, reason=reason).id

    def add_memory_ex(self, content: str, *, dedup: bool = True, reason: str = "", **fields) -> AddResult:
        """Like add_memory, but also says whether a near-duplicate was reinforced instead."""
        return self._add_many([{"content": content, **fields}], dedup=dedup, reason=reason)[0]

    def add_memories(self, items: Iterable[dict], dedup: bool = True, reason: str = "",
                     batch_size: int = 256, progress=None) -> list[int]:
        return [r.id for r in self.add_memories_ex(items, dedup=dedup, reason=reason,
                                                   batch_size=batch_size, progress=progress)]

    def add_memories_ex(self, items: Iterable[dict], dedup: bool = True, reason: str = "",
                        batch_size: int = 256, progress=None) -> list[AddResult]:
        items = list(items)
        out: list[AddResult] = []
        # Batches are embedded then written in turn. Embedding the next batch on a thread while
        # one is written was tried: no gain on 2 cores (124 vs 128/s), the writer steals torch's.
        for start in range(0, len(items), batch_size):
            chunk = items[start:start + batch_size]
            out.extend(self._add_many(chunk, dedup=dedup, reason=reason))
            if progress:
                progress(len(chunk))
        return out

    def _add_many(self, items: list[dict], *, dedup: bool, reason: str) -> list[AddResult]:
        norm = [normalize_item(i) for i in items]        # validate everything before writing
        emb = self.embedder.require() if self.embedder.state != "none" else None
        vecs = emb.embed([n["content"] for n in norm]) if emb else None
        now = self.clock.now()
        thr = self.settings.search.dedup_threshold
        if dedup and vecs is not None:   # big batches check duplicates in memory, all at once
            self.vectors.prepare_batch(len(norm), self.settings.search.dedup_matrix_from)

        def write(conn) -> list[AddResult]:
            results: list[AddResult] = []
            # In-batch dedup: every pair's cosine in one product (a Python loop of np.dot over
            # the batch's earlier inserts cost ~0.2 ms an item), and the ids inserted so far.
            pairs = vecs @ vecs.T if dedup and vecs is not None else None
            fresh: dict[int, tuple[int, str | None]] = {}     # batch index -> (id, agent)
            near = (self.vectors.best_matches(conn, vecs, [n["agent"] for n in norm])
                    if dedup and vecs is not None else None)
            for i, n in enumerate(norm):
                vec = vecs[i] if vecs is not None else None
                dup = None
                if dedup:
                    dup = _twin(pairs, fresh, i, n["agent"], thr)
                    if dup is None:
                        dup = self._find_duplicate(conn, n, vec, thr, near[i] if near else None)
                if dup is not None:
                    self._reinforce(conn, [dup], now, action="reinforce",
                                    reason=reason or "near-duplicate added")
                    results.append(AddResult(dup, True))
                    continue
                created = float(n["created_at"]) if n["created_at"] is not None else now
                cur = conn.execute(
                    "INSERT INTO memories(content, kind, category, tier, agent, user, importance,"
                    " strength, anchor_strength, created_at, last_reinforced_at, pinned, session_id,"
                    " message_id, metadata, updated_at) VALUES (?,?,?,?,?,?,?,1.0,1.0,?,?,?,?,?,?,?)",
                    (n["content"], n["kind"], n["category"], n["tier"], n["agent"], n["user"],
                     n["importance"], created, created, n["pinned"], n["session_id"],
                     n["message_id"], n["metadata_json"], now))
                mid = int(cur.lastrowid)
                if vec is not None:
                    row = conn.execute("SELECT * FROM memories WHERE id = ?", (mid,)).fetchone()
                    self.vectors.put(conn, mid, vec, row)
                    fresh[i] = (mid, n["agent"])
                audit.append(conn, at=now, actor=self.actor, action="add", target_kind="memory",
                             target_id=mid, reason=reason,
                             summary={"kind": n["kind"], "category": n["category"], "tier": n["tier"],
                                      "agent": n["agent"], "preview": audit.snippet(n["content"])})
                results.append(AddResult(mid, False))
            return results

        return self.store.write(write)

    def _find_duplicate(self, conn, n: dict, vec, thr: float, near=None) -> int | None:
        """A stored memory `n` repeats. `near`: (id, similarity) of the closest stored memory of
        the same agent (batched)."""
        if vec is None:    # keyword-only engine: exact text is the only safe duplicate test
            row = conn.execute(
                "SELECT id FROM memories WHERE content = ? AND agent = ? AND tier != 'archived' LIMIT 1",
                (n["content"], n["agent"])).fetchone()
            return int(row[0]) if row else None
        if near is not None and near[0] is not None and near[1] >= thr:
            return near[0]
        return None

    # -- reinforcement -----------------------------------------------------------------------------
    def _reinforce(self, conn, ids: list[int], now: float, *, action: str, reason: str = "",
                   count_access: bool = True) -> None:
        """Raise strength (bounded at 1) from its current decayed value and reset the anchor."""
        boost = self.settings.decay.reinforce_boost
        for mid in ids:
            r = conn.execute("SELECT * FROM memories WHERE id = ?", (mid,)).fetchone()
            if r is None:
                continue
            before = self.current_strength(r, now)
            after = min(1.0, before + boost)
            conn.execute(
                "UPDATE memories SET anchor_strength = ?, strength = ?, last_reinforced_at = ?,"
                " access_count = access_count + ?, last_accessed_at = ?, archive_at = NULL,"
                " updated_at = ? WHERE id = ?",
                (after, after, now, 1 if count_access else 0, now, now, mid))
            audit.append(conn, at=now, actor=self.actor, action=action, target_kind="memory",
                         target_id=mid, reason=reason,
                         summary={"strength": [round(before, 3), round(after, 3)]})

    def current_strength(self, r, now: float | None = None) -> float:
        """Closed form: anchor · exp(-λ_kind · (now - last_reinforced)); core and pinned hold."""
        if r["pinned"] or r["tier"] == "core":
            return float(r["anchor_strength"])
        now = self.clock.now() if now is None else now
        dt = max(0.0, now - float(r["last_reinforced_at"] or 0.0))
        return float(r["anchor_strength"]) * math.exp(-self.settings.decay.rate(r["kind"]) * dt)

    def reinforce_memory(self, memory_id: int, reason: str = "") -> Memory:
        self.get_memory(memory_id)
        self.store.write(lambda c: self._reinforce(c, [memory_id], self.clock.now(),
                                                   action="reinforce", reason=reason))
        return self.get_memory(memory_id)

    # -- reads ---------------------------------------------------------------------------------------
    def get_memory(self, memory_id: int) -> Memory:
        r = self.store.read_one("SELECT * FROM memories WHERE id = ?", (_as_id(memory_id),))
        if r is None:
            raise NotFound(f"no memory with id {memory_id}")
        return self._with_strength(r)

    def _with_strength(self, r) -> Memory:
        """A Memory whose strength is current (closed form), not the stored snapshot."""
        m = row_to_memory(r)
        m.strength = self.current_strength(r)
        return m

    def memories_from_message(self, message_id: int) -> list[Memory]:
        rows = self.store.read("SELECT * FROM memories WHERE message_id = ? ORDER BY id", (message_id,))
        return [row_to_memory(r) for r in rows]

    def list_memories(self, *, tier: str | None = None, agent: str | None = None,
                      session_id: str | None = None, limit: int = 500) -> list[Memory]:
        where, params = ["1=1"], []
        if tier:
            where.append("tier = ?"); params.append(tier)
        if agent:
            where.append("agent = ?"); params.append(agent)
        if session_id:
            where.append("session_id = ?"); params.append(session_id)
        rows = self.store.read(f"SELECT * FROM memories WHERE {' AND '.join(where)} "
                               f"ORDER BY id DESC LIMIT ?", [*params, int(limit)])
        return [self._with_strength(r) for r in rows]

    # -- operator edits ---------------------------------------------------------------------------------
    def _update_memory(self, memory_id: int, action: str, changes: dict, reason: str) -> Memory:
        before = self.get_memory(memory_id)
        now = self.clock.now()
        cols = ", ".join(f"{c} = ?" for c in changes)     # column names come from this module only

        def write(conn):
            conn.execute(f"UPDATE memories SET {cols}, updated_at = ? WHERE id = ?",
                         [*changes.values(), now, before.id])
            summary = {c: [getattr(before, c, None), v] for c, v in changes.items() if c != "content"}
            if "content" in changes:
                summary["content"] = [audit.snippet(before.content), audit.snippet(changes["content"])]
            audit.append(conn, at=now, actor=self.actor, action=action, target_kind="memory",
                         target_id=before.id, reason=reason, summary=summary)

        self.store.write(write)
        return self.get_memory(before.id)

    def pin_memory(self, memory_id: int, reason: str = "") -> Memory:
        return self._update_memory(memory_id, "pin", {"pinned": 1}, reason)

    def unpin_memory(self, memory_id: int, reason: str = "") -> Memory:
        # Decay resumes from now at the strength it held, not from its last reinforcement.
        return self._update_memory(memory_id, "unpin", {"pinned": 0, **self._decay_restart(memory_id)},
                                   reason)

    def set_importance(self, memory_id: int, importance: float, reason: str = "") -> Memory:
        try:
            imp = float(importance)
        except (TypeError, ValueError):
            raise InvalidInput(f"importance must be a number between 0 and 1, not {importance!r}") from None
        if not 0.0 <= imp <= 1.0:
            raise InvalidInput(f"importance must be between 0 and 1, not {imp}")
        return self._update_memory(memory_id, "set-importance", {"importance": imp}, reason)

    def set_tier(self, memory_id: int, tier: str, reason: str = "") -> Memory:
        if tier not in TIERS:
            raise InvalidInput(f"unknown tier {tier!r}; use one of {', '.join(TIERS)}")
        action = {"archived": "archive", "active": "restore", "core": "promote-core"}[tier]
        changes = {"tier": tier}
        if tier == "active":     # restored or demoted from core: decay restarts now (engine/decay_pass)
            changes.update(self._decay_restart(memory_id))
        return self._update_memory(memory_id, action, changes, reason)

    def archive_memory(self, memory_id: int, reason: str = "") -> Memory:
        return self.set_tier(memory_id, "archived", reason)

    def edit_memory(self, memory_id: int, content: str, reason: str = "") -> Memory:
        content = check_text(content, "content")
        # Pending until the new vector is in: a crash before that must not leave the old
        # text's vector marked current.
        mem = self._update_memory(memory_id, "edit", {"content": content, "embedded": 0}, reason)
        self._embed_one(mem.id)
        return self.get_memory(mem.id)

    # -- vectors ---------------------------------------------------------------------------------------
    def _embed_one(self, memory_id: int) -> None:
        emb = self.embedder.get()
        if emb is None:
            self.store.write(lambda c: c.execute("UPDATE memories SET embedded = 0 WHERE id = ?", (memory_id,)))
            return
        r = self.store.read_one("SELECT * FROM memories WHERE id = ?", (memory_id,))
        vec = emb.embed([r["content"]])[0]
        self.store.write(lambda c: self.vectors.put(c, memory_id, vec, r))

    def pending_vectors(self) -> int:
        return int(self.store.read_one("SELECT count(*) FROM memories WHERE embedded = 0")[0])

    def backfill_vectors(self, batch: int = 256, progress=None) -> int:
        """Embed memories written while no model was loaded. Returns how many were filled."""
        emb = self.embedder.get()
        if emb is None:
            return 0
        done = 0
        closed = getattr(self, "_closed", None)
        while closed is None or not closed.is_set():
            rows = self.store.read("SELECT * FROM memories WHERE embedded = 0 ORDER BY id LIMIT ?", (batch,))
            if not rows:
                return done
            vecs = emb.embed([r["content"] for r in rows])

            def write(conn, rows=rows, vecs=vecs):
                for r, v in zip(rows, vecs):
                    cur = conn.execute("SELECT content FROM memories WHERE id = ?", (r["id"],)).fetchone()
                    if cur is not None and cur[0] == r["content"]:   # skip rows edited meanwhile
                        self.vectors.put(conn, r["id"], v, r)

            self.store.write(write)
            done += len(rows)
            if progress:
                progress(len(rows))
        return done


def _as_id(value) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInput(f"a memory id is a whole number, not {value!r}") from None


def _twin(pairs, fresh: dict, i: int, agent, thr: float) -> int | None:
    """The id of the first memory inserted earlier in this batch by the same agent whose cosine
    with item i reaches thr (`pairs`: the batch's cosine matrix), else None."""
    if pairs is None or not fresh:
        return None
    for j in np.flatnonzero(pairs[i, :i] >= thr):
        hit = fresh.get(int(j))
        if hit is not None and hit[1] == agent:
            return hit[0]
    return None
