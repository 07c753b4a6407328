"""MemoryEngine: the façade over one memory database. It builds one Context (store, clock,
settings, actor, embedder, vectors) and composes the services, grouped by noun
(`eng.rules.pin(id)`, `eng.curator.approve(id)`); only the hot names stay flat on it: `add_memory`,
`add_memories`, `search`, `explain`, `wait_for_embedder`, `close`, `counts`, `data_version`."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from engine import tempfiles
from engine.audit.service import AuditLog
from engine.clock import Clock, SystemClock
from engine.config import Settings, load_settings
from engine.context import Context
from engine.embed import Embedder, EmbedderHandle
from engine.embedding.tag import stamp_model_tag
from engine.engine_identity import CallerIdentity
from engine.identity import (
    os_identity,
    os_user,
)
from engine.lifecycle.decay_pass import Decay
from engine.lifecycle.flows import Flows
from engine.lifecycle.rules import Rules
from engine.memories import MemoriesService
from engine.operators import Operators
from engine.paths import home_of
from engine.retrieval.request import SearchRequest
from engine.retrieval.search import Retrieval
from engine.retrieval.vectors import VectorIndex
from engine.roles import Role, guard
from engine.sessions import SessionsService
from engine.storage import Storage, open_storage, operator_directory, postgres_url
from engine.types import Counts, Explanation, SearchResult

if TYPE_CHECKING:
    from engine.curator.service import Curator
    from engine.embedding.reembed import Reembed
    from engine.forget.service import Forget
    from engine.health.doctor import Health
    from engine.importers.service import Importers
    from engine.lifecycle.boot import Boot
    from engine.lifecycle.gates import Gates
    from engine.recalls.checks import Checks
    from engine.recalls.service import Recalls

S = TypeVar("S")


def default_actor() -> str:
    """The OS user of this process's uid (engine/identity.py; never $USER)."""
    return os_user()


class MemoryEngine(CallerIdentity):
    """One open memory database: its context, its services by noun, and the hot names."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        embedder: Embedder | str | None = "default",
        clock: Clock | None = None,
        actor: str | None = None,
        settings: Settings | None = None,
        label: str | None = None,
        operator: str | None = None,
        load: str = "background",
        auto_backfill: bool = True,
        read_only: bool = False,
    ) -> None:
        text = os.fspath(path)
        # A server URL goes through as given (also one a caller made a Path of, which keeps one
        # slash after the scheme): its path is the store's, never a file here that a report, a
        # seal or a reopen would create. A file path is made absolute (reports resolve beside it).
        url = postgres_url(text)
        db = Path(text).expanduser().absolute() if url is None else None
        settings = settings or load_settings()
        # read_only: refuse every write (a standby is found read-only whatever is asked: `read_only`)
        store = open_storage(db or url or text, readonly=read_only)  # exactly one of db and url is set
        self.reconciled = store.reconcile()
        self.ctx = Context(
            store=store,
            clock=clock or SystemClock(),
            settings=settings,
            default_identity=os_identity(),
            embedder=EmbedderHandle(
                embedder,
                settings.model_path,
                tag=lambda: self.ctx.vectors.tag(fresh=True),
                batch=settings.embed_batch,  # issue #24: one model's passes shared (embatch)
            ),
            vectors=VectorIndex(store, settings.search.bits_from, settings.search.bits_rescore),
            path=store.path if db is None else db,
        )
        self._closed = threading.Event()
        stamp_model_tag(store)  # issue #26: a store from before model tags says which model it holds
        # -- who is calling (engine/identity.py) and what they may do (engine/roles.py) --
        self.operators = Operators(self.ctx, operator_directory(store))
        self.operators.is_read_only = lambda: self.read_only
        self.ctx.default_identity = self._identity(actor, label, operator)
        if db is not None:  # a bulk copy killed with -9 (migrate, export) left its temp folder
            tempfiles.sweep(home_of(db))  # (a server's home is swept by its next bulk copy)
        # -- services (retrieval, memories, sessions) --
        self.memories = MemoriesService(self.ctx, closing=self._closed)
        self.sessions = SessionsService(self.ctx)
        self.retrieval = Retrieval(self.ctx, self.memories, self.sessions)
        # -- services (lifecycle: decay, rules, flows, gates, boot) --
        self.decay = Decay(self.ctx)
        self.rules = Rules(self.ctx, self.memories)
        self.flows = Flows(self.ctx)
        self.audit = AuditLog(self.ctx)  # registers the head anchor's after-commit hook
        for noun in ("memories", "sessions", "retrieval", "decay", "rules", "flows", "audit", "operators"):
            self._guarded(getattr(self, noun), noun)
        self.retrieval.search = self._viewer_records_nothing(self.retrieval.search)  # type: ignore[method-assign]
        # boot, gates, curator, forget, health and importers are built on first use (below): a
        # console's first frame or a one-verb CLI call does not pay their imports (~0.1 s).
        if auto_backfill and not self.read_only:  # a read-only engine writes no vectors
            self.embedder.on_ready(self._backfill_quietly)
        if load == "background":
            self.embedder.start()
        elif load == "now":
            self.embedder.wait()

    # -- services built on first use (stateless beyond the context: building twice is harmless) -----
    @cached_property
    def boot(self) -> Boot:
        from engine.lifecycle.boot import Boot

        return self._guarded(Boot(self.ctx, self.rules), "boot")

    @cached_property
    def gates(self) -> Gates:
        from engine.lifecycle.gates import Gates

        return self._guarded(Gates(self.ctx, self.rules, self.flows, self.boot, self.memories), "gates")

    @cached_property
    def importers(self) -> Importers:
        from engine.importers.service import Importers

        return self._guarded(Importers(self.ctx, self.memories, self.sessions, self.flows), "importers")

    @cached_property
    def curator(self) -> Curator:
        from engine.curator.service import Curator

        return self._guarded(Curator(self.ctx, self.memories, self.retrieval), "curator")

    @cached_property
    def forget(self) -> Forget:
        from engine.forget.service import Forget

        return self._guarded(Forget(self.ctx), "forget")

    @cached_property
    def recalls(self) -> Recalls:
        from engine.recalls.service import Recalls

        return self._guarded(Recalls(self.ctx, self.retrieval), "recalls")

    @cached_property
    def checks(self) -> Checks:
        from engine.recalls.checks import Checks

        return self._guarded(Checks(self.ctx, self.retrieval), "checks")

    @cached_property
    def embedding(self) -> Reembed:
        from engine.embedding.reembed import Reembed

        return self._guarded(Reembed(self.ctx, self._closed), "embedding")

    @cached_property
    def health(self) -> Health:
        from engine.health.doctor import Health

        return self._guarded(Health(self.ctx, self.memories), "health")

    # -- the context, as attributes (settable: services see the change at once) --------------------
    @property
    def store(self) -> Storage:
        return self.ctx.store

    @property
    def path(self) -> Path:
        return self.ctx.path

    @property
    def clock(self) -> Clock:
        return self.ctx.clock

    @clock.setter
    def clock(self, value: Clock) -> None:
        self.ctx.clock = value

    @property
    def settings(self) -> Settings:
        return self.ctx.settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        self.ctx.settings = value

    def _guarded(self, service: S, noun: str) -> S:
        guard(service, noun, self.operators.check)
        return service

    def _viewer_records_nothing(self, search: Callable[[SearchRequest], SearchResult]):
        """A search asking to record access runs without recording it for a caller below agent."""

        def run(request: SearchRequest) -> SearchResult:
            if request.record_access and Role.AGENT not in self._roles_quietly():
                request = replace(request, record_access=False)
            return search(request)

        return run

    def _roles_quietly(self) -> frozenset[Role]:
        try:
            return self.operators.roles()
        except Exception:  # noqa: BLE001 - an untrusted operators file: viewer
            return frozenset({Role.VIEWER})

    @property
    def embedder(self) -> EmbedderHandle:
        return self.ctx.embedder

    @property
    def vectors(self) -> VectorIndex:
        return self.ctx.vectors

    # -- the hot names (memories, retrieval) ------------------------------------------------------------
    def add_memory(
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
        return self.memories.add(
            content,
            kind=kind,
            category=category,
            tier=tier,
            agent=agent,
            user=user,
            importance=importance,
            metadata=metadata,
            session_id=session_id,
            message_id=message_id,
            pinned=pinned,
            dedup=dedup,
            reason=reason,
        )

    def add_memories(
        self,
        items: Iterable[dict],
        dedup: bool = True,
        reason: str = "",
        batch_size: int = 256,
        progress: Callable[[int], object] | None = None,
    ) -> list[int]:
        return self.memories.add_many(
            items, dedup=dedup, reason=reason, batch_size=batch_size, progress=progress
        )

    def search(
        self,
        query: str,
        k: int = 10,
        tier: Any = None,
        kind: str | None = None,
        category: str | None = None,
        agent: str | None = None,
        user: str | None = None,
        mode: str | None = None,
        record_access: bool = True,
        door: str = "",
        for_agent: str = "",
    ) -> SearchResult:
        # door / for_agent: an agent's recall through that door, logged (engine/recalls/log.py)
        return self.retrieval.search(
            SearchRequest.make(
                query, k, tier, kind, category, agent, user, mode, record_access, door, for_agent
            )
        )

    def explain(
        self,
        query: str,
        memory_id: int,
        k: int = 10,
        tier: Any = None,
        kind: str | None = None,
        category: str | None = None,
        agent: str | None = None,
        user: str | None = None,
        mode: str | None = None,
    ) -> Explanation:
        return self.retrieval.explain(
            SearchRequest.make(query, k, tier, kind, category, agent, user, mode), memory_id
        )

    # -- lifecycle ---------------------------------------------------------------------------------
    def wait_for_embedder(self, timeout: float | None = None) -> bool:
        """Block until vector search is available (True) or the model failed / timed out (False)."""
        return self.embedder.wait(timeout)

    def _backfill_quietly(self) -> None:
        if self._closed.is_set() or Role.AGENT not in self._roles_quietly():
            return  # a viewer writes no vectors (on PostgreSQL its GRANTs would refuse them)
        try:
            if self.memories.pending_vectors():
                self.memories.backfill_vectors()
        except Exception:
            pass  # the next open (or `doctor --repair`) finishes the job

    def close(self) -> None:
        self._closed.set()  # a running backfill stops after its current batch
        self.embedder.join(timeout=120)
        self.store.close()

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- overview ------------------------------------------------------------------------------------
    def counts(self) -> Counts:
        by_tier, rules, pending, forgets, sessions = self.store.query(lambda c: c.memory_queries.counts())
        tiers = {t: 0 for t in ("core", "active", "archived")}
        tiers.update(by_tier)
        out = Counts(tiers, rules, pending, forgets, sessions)
        if forgets:  # the deadlines of the open forget cases (engine/forget/workflow.py)
            out.overdue_forget_requests, out.next_forget_due_days = self.forget.deadlines()
        return out

    @property
    def read_only(self) -> bool:
        """True on a standby (read replica) or when opened read-only: writes refuse with ReadOnly."""
        return bool(self.store.readonly)

    @property
    def read_only_reason(self) -> str:
        """Why writes are refused, in one line ("read-only replica: writes go to the primary");
        "" when they are not."""
        from engine.storage.readonly import reason

        kind = self.store.read_only_kind
        return reason(kind) if self.read_only and kind else ""

    @property
    def standby(self) -> bool:
        """A streaming read replica (PostgreSQL in recovery): the header says "read-only replica"."""
        from engine.storage.readonly import STANDBY

        return self.store.read_only_kind == STANDBY

    def data_version(self) -> int:
        """Changes whenever another process commits: poll it to refresh live views."""
        return self.store.data_version()


def open_engine(path: str | os.PathLike, **kwargs) -> MemoryEngine:
    """Open (creating and reconciling as needed) the memory database at `path`."""
    return MemoryEngine(path, **kwargs)
