"""The part of the storage port a forget needs beyond portable SQL: purging what the database
keeps of deleted text (index segments, the write-ahead log), the files whose bytes verification
scans, the live text a verification must not count as residue, and reading rows whose text is not
valid UTF-8. SQLite: FTS5 'optimize', secure_delete, `wal_checkpoint(TRUNCATE)`, db/-wal/-shm.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from engine.storage.port import Connection
    from engine.storage.reach import ServerEraser

# Where a forget redacts quotes of the forgotten text in records that stay (engine/forget/scrub.py):
# (table, column, whether the column holds JSON, the table's key). Nothing else is ever rewritten.
SCRUBBED = (
    ("sessions", "title", False, "id"), ("sessions", "metadata", True, "id"),
    ("messages", "metadata", True, "id"), ("memories", "metadata", True, "id"),
    ("rules", "metadata", True, "id"), ("rule_history", "reason", False, "id"),
    ("flows", "metadata", True, "id"), ("flow_runs", "note", False, "id"),
    ("curator_runs", "counts", True, "id"), ("import_watermarks", "value", True, "source"),
    ("forget_requests", "reason", False, "id"),
    ("recall_log", "query", False, "id"), ("retrieval_checks", "query", False, "id"),
    ("retrieval_checks", "last_why", False, "id"),
)  # fmt: skip


def scrubbed_key(table: str, column: str) -> str:
    """The key column of a place a forget may rewrite; ValueError for any other (table, column)."""
    for t, c, _, key in SCRUBBED:
        if (t, c) == (table, column):
            return key
    raise ValueError(f"not a place a forget rewrites: {table[:40]}.{column[:40]}")


class Eraser(Protocol):
    @property
    def server(self) -> ServerEraser | None:
        """What a verification can check on a database server, in levels (engine/storage/reach.py);
        None for a file database, whose verification is the byte scan of its `files()`."""
        ...

    def purge_indexes(self, conn: Connection) -> None:
        """Inside the forget's write: rewrite the keyword indexes so no old segment keeps a
        deleted text's terms (freed pages are zeroed by the store's secure delete)."""
        ...

    def truncate_log(self, tries: int, pause: float) -> bool:
        """Copy the write-ahead log into the database and truncate it (outside any transaction);
        False when other readers kept it through `tries` attempts `pause` seconds apart."""
        ...

    def files(self) -> list[Path]:
        """The database's own files on this host, whose bytes verification scans."""
        ...

    def live_texts(self, conn: Connection, shortest: int) -> list[str]:
        """Every text of `shortest`+ characters still held by a real table (and the schema's own
        words), joined per column: what a forgotten text may share with live records without
        being residue."""
        ...

    def quoting(self, conn: Connection, table: str, column: str, shortest: int) -> list[tuple[Any, str]]:
        """(key, text) of the rows of one SCRUBBED place whose value is text of `shortest`+
        characters (shorter text quotes nothing; a stray blob or number is never read on)."""
        ...

    def overwrite(self, conn: Connection, table: str, column: str, key: Any, value: str) -> None:
        """Inside the forget's write: replace the value of one SCRUBBED place in the row `key`."""
        ...

    def tolerant(self, conn: Connection) -> AbstractContextManager[None]:
        """Reads inside the block give text that is not valid UTF-8 back surrogate-escaped (its
        bytes exactly), so a malformed row never stops a forget."""
        ...
