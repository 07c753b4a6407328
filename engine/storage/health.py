"""The part of the storage port `doctor` needs: the database's own integrity check, the keyword
indexes against their tables, vectors against memories (and rebuilding what is derived), and the
raw reads behind the malformed-row checks, each backend in its own SQL (its health.py). The
portable checks' reads (counts, orphans) are the health read model (conn.health_queries), the audit
chain's engine/audit/; the verdicts on values stay in engine/health/rows.py.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from engine.storage.port import Connection


@dataclass
class Offenders:
    """How many rows are wrong, and the first few of their ids."""

    count: int = 0
    ids: list = field(default_factory=list)


@dataclass
class IndexCoverage:
    indexed: int  # rows the keyword index holds
    missing: Offenders  # table rows the index lacks
    extra: Offenders  # indexed rows with no table row


@dataclass
class VectorGaps:
    stored: int  # vectors held
    missing: Offenders  # memories marked embedded with no vector
    orphans: Offenders  # vectors of memories that do not exist
    stale: Offenders  # vectors whose filter fields differ from their memory's


class HealthChecks(Protocol):
    # A damaged file raises one of these from any read: doctor turns it into a finding.
    errors: tuple[type[BaseException], ...]

    @property
    def dimensions(self) -> int:
        """Floats per stored vector: the store's model's (engine/embedding/tag.py)."""
        ...

    def integrity(self, conn: Connection) -> list[str]:
        """The database's own integrity check: its problems (empty when sound)."""
        ...

    def keyword_indexes(self) -> list[tuple[str, str]]:
        """(index name, its table) of every keyword index."""
        ...

    def coverage(self, conn: Connection, index: str, table: str, sample: int) -> IndexCoverage: ...

    def index_integrity(self, index: str) -> tuple[bool, str]:
        """(sound, detail) of the index's own check against its table (may take the write lock;
        changes nothing)."""
        ...

    def vector_gaps(self, conn: Connection, sample: int) -> VectorGaps: ...

    def repair(self, conn: Connection) -> list[str]:
        """Inside the caller's write: rebuild the keyword indexes, drop orphan vectors, mark
        memories without a vector pending, resync vectors' filter fields. What was done."""
        ...

    def number_suspects(self, conn: Connection, sample: int) -> list[tuple[str, Any, str, Any, bool]]:
        """(table, id, column, value, is a reference) of stored numbers that may not be finite
        numbers, by the schema's declarations; the caller judges each value."""
        ...

    def json_suspects(self, conn: Connection, sample: int) -> list[tuple[str, Any, str, Any, str]]:
        """(table, id, column, value, expected 'object'/'array') of JSON columns that may not
        hold the JSON the code expects."""
        ...

    def vector_batches(self, conn: Connection) -> Iterator[list[tuple[Any, bytes | None]]]:
        """Every (memory id, embedding), in batches (raises one of `errors` at an unreadable one)."""
        ...

    def vectors_one_by_one(self, conn: Connection) -> Iterator[tuple[Any, bytes | None, str | None]]:
        """(memory id, embedding, why it cannot be read) of every vector, one read each."""
        ...


def json_columns(columns: Sequence[tuple[str, str]], table: str) -> dict[str, str]:
    """A table's JSON columns and the JSON type each must hold, read from its declared defaults."""
    out = {n: "object" for n, d in columns if "DEFAULT '{}'" in d}
    out.update({n: "array" for n, d in columns if "DEFAULT '[]'" in d})
    if table == "proposals":
        out["snapshot"] = "object"
    return out
