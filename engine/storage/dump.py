"""What a whole-database export and restore needs from the backend (engine/importers/jsonl_io.py):
the tables and their columns as they are, rows in insertion order, memories with their vectors,
foreign keys checked at the end of the restore, and the highest id a table ever handed out.

The JSONL format itself is portable; only the catalogue, the row order and the vector table differ
by backend (engine/storage/sqlite/dump.py on SQLite; information_schema and key order on
PostgreSQL). A migration into an empty database restores in bulk (engine/importers/migrate_bulk.py):
`insert_rows`, `restore_vectors` (executemany on SQLite, COPY on PostgreSQL), `deferred_upkeep`
(indexes built once after the rows) and `advance_ids`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from engine.storage.port import Connection

# A memory's vector as restore_vectors takes it: (memory id, float32 bytes, tier, kind, category,
# agent, user), the last five the memory's filter fields ("" for a missing agent or user).
VectorRow = tuple[int, bytes, str, str, str, str, str]


class TableDump(Protocol):
    generation: int  # the schema generation an export records in its header
    embed_dim: int  # floats in a stored embedding
    error: type[Exception]  # what a refused row raises (a constraint, a type the column rejects)

    def disk_full(self, conn: Connection, exc: BaseException) -> bool:
        """`exc` (a dump.error) came of a full disk, not of the row: the caller re-raises it, and
        the write says "disk full" instead of blaming a record."""
        ...

    def declared(self) -> list[tuple[str, dict[str, str]]]:
        """Every table of the schema, parents first: (name, {column: its declaration in
        upper case, e.g. "INTEGER NOT NULL DEFAULT 0"})."""
        ...

    def tables(self, conn: Connection, names: Sequence[str]) -> list[tuple[str, list[str], list[str]]]:
        """(table, columns, key columns: [] if none is declared) for each of `names` present,
        in that order."""
        ...

    def has_table(self, conn: Connection, name: str) -> bool: ...

    def rows(
        self, conn: Connection, table: str, cols: Sequence[str], *, leave_out: Sequence[str] = ()
    ) -> Iterable[Any]:
        """Every row of `table` (the `cols`), oldest first; `leave_out`: the keys (meta's `key`
        column) of rows not read (a database's own identity rows)."""
        ...

    def count(self, conn: Connection, table: str, *, leave_out: Sequence[str] = ()) -> int:
        """How many rows `rows` would give."""
        ...

    def any_row(self, conn: Connection, table: str) -> bool:
        """`table` holds at least one row."""
        ...

    def row(
        self, conn: Connection, table: str, key: Sequence[str], values: Sequence[Any]
    ) -> dict[str, Any] | None:
        """The whole row of `table` whose `key` columns hold `values` (column -> value), or None."""
        ...

    def has_id(self, conn: Connection, table: str, row_id: int) -> bool:
        """`table` holds a row with this id."""
        ...

    def meta(self, conn: Connection) -> dict[str, Any]:
        """Every meta row, key -> value."""
        ...

    def savepoint(self, conn: Connection) -> None:
        """Mark where a bulk batch starts, inside the caller's transaction (one mark at a time)."""
        ...

    def rollback_savepoint(self, conn: Connection) -> None:
        """Undo what was written since `savepoint` (the transaction goes on)."""
        ...

    def release_savepoint(self, conn: Connection) -> None:
        """Keep what was written since `savepoint`; the mark goes."""
        ...

    def memories_with_vectors(self, conn: Connection, cols: Sequence[str]) -> Iterable[Any]:
        """Every memory (the `cols`) oldest first, its stored embedding (or None) last."""
        ...

    def insert(self, conn: Connection, table: str, row: dict[str, Any]) -> int:
        """Insert a restored row as it is (its id kept); returns the key a foreign-key
        violation names it by."""
        ...

    def insert_rows(
        self, conn: Connection, table: str, cols: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        """Insert restored rows as they are (ids kept) in bulk: `rows` hold the `cols` in order.
        A refused row raises `error` (which one is not said: the caller retries them one by one
        under a savepoint to name it)."""
        ...

    def restore_vectors(self, conn: Connection, vectors: Sequence[VectorRow], *, log: bool) -> None:
        """Store just-restored memories' exported embeddings in bulk (as `restore_vector` each)."""
        ...

    def deferred_upkeep(self, conn: Connection, table: str, rows: int) -> Callable[[], None]:
        """Before `rows` rows are restored in bulk into `table` (empty until now): stop upkeep that
        is faster done once afterwards than row by row (an index, a keyword index's triggers);
        returns what does it, in the same transaction, after the last row."""
        ...

    def advance_ids(self, conn: Connection, table: str) -> None:
        """After `insert_rows` kept ids in `table`: the next id it hands out is past all of them."""
        ...

    def restore_vector(self, conn: Connection, memory: Any, embedding: bytes, *, log: bool) -> None:
        """Store a just-restored memory's exported embedding (`memory`: its row); `log`: the
        file has the vector change log (`has_table(conn, "vector_changes")`)."""
        ...

    def defer_foreign_keys(self, conn: Connection) -> None:
        """Check foreign keys at commit, not per row (children may arrive before parents)."""
        ...

    def foreign_key_violations(self, conn: Connection) -> list[tuple[str, int, str]]:
        """(table, row key as `insert` returned it, parent table) for each dangling reference."""
        ...

    def high_water(self, conn: Connection, table: str) -> int:
        """The largest id `table` ever handed out (deleted rows included where known)."""
        ...
