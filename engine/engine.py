"""MemoryEngine: the one object that owns a memory database. Each concern lives in its own mixin
module; this file only wires them together and opens the file."""
from __future__ import annotations

import getpass
import os
import threading
from pathlib import Path

from . import schema
from .clock import Clock, SystemClock
from .audit import AuditMixin
from .config import Settings, load_settings
from .curator import CuratorMixin
from .forget import ForgetMixin
from .doctor import DoctorMixin
from .embed import Embedder, EmbedderHandle
from .explain import ExplainMixin
from .importers.mixin import ImportMixin
from .ingest import IngestMixin
from .keyword import KeywordMixin
from .lifecycle import LifecycleMixin
from .lifecycle_views import LifecycleViewsMixin
from .memories import MemoriesMixin
from .search import SearchMixin
from .sessions import SessionsMixin
from .store import Store
from .types import Counts
from .vectors import VectorIndex


def default_actor() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return os.environ.get("USER", "unknown")


class MemoryEngine(SessionsMixin, MemoriesMixin, SearchMixin, KeywordMixin, ExplainMixin,
                   IngestMixin, DoctorMixin, ImportMixin, AuditMixin, CuratorMixin, ForgetMixin,
                   LifecycleMixin, LifecycleViewsMixin):
    def __init__(self, path: str | os.PathLike, *, embedder: "Embedder | str | None" = "default",
                 clock: Clock | None = None, actor: str | None = None,
                 settings: Settings | None = None, load: str = "background",
                 auto_backfill: bool = True) -> None:
        self.path = Path(path).expanduser().absolute()   # reports and scans resolve beside it
        self.settings = settings or load_settings()
        self.clock = clock or SystemClock()
        self.actor = actor or default_actor()
        self.store = Store(self.path)
        self.reconciled = self.store.retrying(lambda: schema.reconcile(self.store.conn))
        self.vectors = VectorIndex(self.store, self.settings.search.bits_from,
                                   self.settings.search.bits_rescore)
        self.embedder = EmbedderHandle(embedder, self.settings.model_path)
        self._closed = threading.Event()
        if auto_backfill:
            self.embedder.on_ready(self._backfill_quietly)
        if load == "background":
            self.embedder.start()
        elif load == "now":
            self.embedder.wait()

    # -- lifecycle ---------------------------------------------------------------------------------
    def wait_for_embedder(self, timeout: float | None = None) -> bool:
        """Block until vector search is available (True) or the model failed / timed out (False)."""
        return self.embedder.wait(timeout)

    def start_embedder(self) -> None:
        self.embedder.start()

    def _backfill_quietly(self) -> None:
        if self._closed.is_set():
            return
        try:
            if self.pending_vectors():
                self.backfill_vectors()
        except Exception:
            pass   # the next open (or `doctor --repair`) finishes the job

    def close(self) -> None:
        self._closed.set()            # a running backfill stops after its current batch
        self.embedder.join(timeout=120)
        self.store.close()

    def __enter__(self) -> "MemoryEngine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- overview ------------------------------------------------------------------------------------
    def counts(self) -> Counts:
        with self.store.reading() as c:
            tiers = {t: 0 for t in ("core", "active", "archived")}
            for tier, n in c.execute("SELECT tier, count(*) FROM memories GROUP BY tier"):
                tiers[tier] = n
            rules = c.execute("SELECT count(*) FROM rules WHERE status != 'retired'").fetchone()[0]
            pending = c.execute("SELECT count(*) FROM proposals WHERE status = 'pending'").fetchone()[0]
            forgets = c.execute("SELECT count(*) FROM forget_requests WHERE status IN "
                                "('open', 'previewed')").fetchone()[0]
            sessions = c.execute("SELECT count(*) FROM sessions").fetchone()[0]
        return Counts(tiers, rules, pending, forgets, sessions)

    def data_version(self) -> int:
        """Changes whenever another process commits: poll it to refresh live views."""
        return self.store.data_version()


def open_engine(path: str | os.PathLike, **kwargs) -> MemoryEngine:
    """Open (creating and reconciling as needed) the memory database at `path`."""
    return MemoryEngine(path, **kwargs)
