"""The storage port: what the services need from a database, and nothing else.

Services hold no SQL: the connection a `query`/`reading`/`write`/`dry_run` gives them carries a
gateway per table (`conn.memories`, the table's only writer) and a read model per area
(`conn.forget_queries`), each rendered by the adapter in its own dialect. What else differs
between backends sits behind named parts of the port: the keyword index (FTS5 / tsvector BM25),
the vector store (sqlite-vec / pgvector), the decay pass's access path, the schema and health
checks, the change counter and change feed (data_version + the vector log / LISTEN-NOTIFY),
erasure with its verification, the dump and the curator's bulk reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from engine.storage.curator import CuratorReads
from engine.storage.dump import TableDump
from engine.storage.erasure import Eraser
from engine.storage.feed import CatchUp, Follower
from engine.storage.gateways.audit import AuditRows
from engine.storage.gateways.curator_runs import CuratorRunRows
from engine.storage.gateways.flow_runs import FlowRunRows
from engine.storage.gateways.flows import FlowRows
from engine.storage.gateways.forget_requests import ForgetRequestRows
from engine.storage.gateways.import_watermarks import ImportWatermarkRows
from engine.storage.gateways.memories import MemoryRows
from engine.storage.gateways.messages import MessageRows
from engine.storage.gateways.meta import MetaRows
from engine.storage.gateways.proposals import ProposalRows
from engine.storage.gateways.recall_log import RecallLogRows
from engine.storage.gateways.retrieval_checks import RetrievalCheckRows
from engine.storage.gateways.rule_history import RuleHistoryRows
from engine.storage.gateways.rules import RuleRows
from engine.storage.gateways.sessions import SessionRows
from engine.storage.gateways.tombstones import TombstoneRows
from engine.storage.gateways.vector_staging import VectorStagingRows
from engine.storage.health import HealthChecks
from engine.storage.indexes import KeywordIndex, VectorStore
from engine.storage.lifecycle import DecayAccess
from engine.storage.queries.audit import AuditQueries
from engine.storage.queries.curator import CuratorQueries
from engine.storage.queries.forget import ForgetQueries
from engine.storage.queries.health import HealthQueries
from engine.storage.queries.imports import ImportQueries
from engine.storage.queries.lifecycle import LifecycleQueries
from engine.storage.queries.memory import MemoryQueries
from engine.storage.queries.recalls import RecallQueries

T = TypeVar("T")


class Row(Protocol):
    """A result row: by position and by column name."""

    def __getitem__(self, key: int | str) -> Any: ...

    def keys(self) -> list[str]: ...


class Connection(Protocol):
    """The connection a read or write function receives: the table gateways (one writer per table)
    and the read models, each bound to this connection and rendered in the adapter's own SQL.
    Services call these, never `execute` (engine/storage alone holds SQL)."""

    @property
    def meta(self) -> MetaRows: ...

    @property
    def sessions(self) -> SessionRows: ...

    @property
    def messages(self) -> MessageRows: ...

    @property
    def memories(self) -> MemoryRows: ...

    @property
    def rules(self) -> RuleRows: ...

    @property
    def rule_history(self) -> RuleHistoryRows: ...

    @property
    def flows(self) -> FlowRows: ...

    @property
    def flow_runs(self) -> FlowRunRows: ...

    @property
    def proposals(self) -> ProposalRows: ...

    @property
    def curator_runs(self) -> CuratorRunRows: ...

    @property
    def audit(self) -> AuditRows: ...

    @property
    def forget_requests(self) -> ForgetRequestRows: ...

    @property
    def tombstones(self) -> TombstoneRows: ...

    @property
    def import_watermarks(self) -> ImportWatermarkRows: ...

    @property
    def memory_queries(self) -> MemoryQueries: ...

    @property
    def audit_queries(self) -> AuditQueries: ...

    @property
    def forget_queries(self) -> ForgetQueries: ...

    @property
    def curator_queries(self) -> CuratorQueries: ...

    @property
    def lifecycle_queries(self) -> LifecycleQueries: ...

    @property
    def imports_queries(self) -> ImportQueries: ...

    @property
    def health_queries(self) -> HealthQueries: ...

    @property
    def recall_log(self) -> RecallLogRows: ...

    @property
    def retrieval_checks(self) -> RetrievalCheckRows: ...

    @property
    def recall_queries(self) -> RecallQueries: ...

    @property
    def vector_staging(self) -> VectorStagingRows: ...

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ...) -> Any:
        """The adapter's own SQL (its dialect); only engine/storage calls it."""
        ...

    def executemany(self, sql: str, params: Iterable[Sequence[Any] | Mapping[str, Any]]) -> Any:
        """`execute` for each parameter set (the adapter's own SQL)."""
        ...


@dataclass
class Reconciled:
    """What opening did to bring the database up to the engine's schema (never drops data)."""

    created: list[str] = field(default_factory=list)
    added_columns: list[str] = field(default_factory=list)
    recreated: list[str] = field(default_factory=list)
    rebuilt: list[str] = field(default_factory=list)  # tables rebuilt with never-reused ids
    from_generation: int = 0


class ChangeFeed(Protocol):
    """The log of memories whose vector, filter fields or words changed, by growing sequence
    number: what the in-memory matrices read to stay equal to the database."""

    def head(self, conn: Connection) -> tuple[int, int]:
        """(newest, oldest) sequence number in the log; (0, 0) when it is empty."""
        ...

    def newest(self, conn: Connection) -> int: ...

    def changed(self, conn: Connection, after: int, upto: int | None = None, text: bool = False) -> list[int]:
        """The memory ids logged after `after` (up to `upto`, inclusive, if given); `text`: only
        those whose words changed."""
        ...

    def changed_vectors(self, conn: Connection, after: int) -> tuple[list[int], list[Any] | None]:
        """`changed(conn, after)` and, where one statement can bring them, the vector store's
        `entries` of those ids (None: the caller reads them)."""
        ...

    def follow(self, follower: Follower) -> None:
        """Read ahead for this matrix (held weakly): a read snapshot's first `head()` may bring
        what every follower needs in the same read (PostgreSQL); a no-op where reads are cheap."""
        ...

    def caught_up(self, conn: Connection, after: int) -> CatchUp | None:
        """What this read snapshot's `head()` already read for a follower at `after` (None:
        nothing; the follower asks with `changed()` and its own reads)."""
        ...


class Storage(Protocol):
    """One database. Writes run a function in one transaction with bounded, jittered retries:
    callers never see "locked" or a serialization error, only `StoreBusy` after their patience."""

    path: Path
    # Called with the connection after each committed write (never after a rollback or dry run).
    after_commit: list[Callable[[Any], None]]
    hook_errors: list[str]  # failures of after_commit hooks, for doctor
    # Writes refused with ReadOnly before trying (engine/storage/readonly.py): a standby, or a
    # store opened read-only; read_only_kind says which (None: writes are taken).
    readonly: bool
    read_only_kind: str | None

    # -- the parts where backends differ -----------------------------------------------------------
    @property
    def keyword(self) -> KeywordIndex: ...

    @property
    def vector_store(self) -> VectorStore: ...

    @property
    def decay_access(self) -> DecayAccess: ...

    @property
    def feed(self) -> ChangeFeed: ...

    @property
    def eraser(self) -> Eraser: ...

    @property
    def health(self) -> HealthChecks: ...

    @property
    def dump(self) -> TableDump: ...

    @property
    def curator(self) -> CuratorReads: ...

    @property
    def in_write(self) -> bool:
        """Inside a write (or dry run) on this store: nested calls join that transaction."""
        ...

    def reconcile(self) -> Reconciled:
        """Create what is missing, add missing columns, record the generation (one transaction)."""
        ...

    def query(self, fn: Callable[[Connection], T]) -> T:
        """`fn(conn)` on one read snapshot, retried while the database is busy: how services read
        through the gateways and read models outside a write."""
        ...

    def reading(self) -> AbstractContextManager[Any]:
        """Several reads that must see one snapshot."""
        ...

    def write(self, fn: Callable[[Any], T]) -> T:
        """`fn(conn)` in one transaction (it may run more than once: no side effects outside)."""
        ...

    def dry_run(self, fn: Callable[[Any], T]) -> T:
        """`fn(conn)` exactly as `write` runs it, then rolled back: the one dry-run mechanism."""
        ...

    def data_version(self) -> int:
        """The change counter: differs after any other connection commits (live views poll it)."""
        ...

    def close(self) -> None: ...
