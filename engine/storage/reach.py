"""What a forget's verification can check on a database server, beyond the Eraser port
(engine/storage/erasure.py): a server's files are the server's, so verification goes in levels
(engine/forget/levels.py). An eraser whose `server` is a `ServerEraser` gets them; a file
database's eraser (SQLite, `server` None) keeps the plain byte scan of its files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from engine.storage.port import Connection


@dataclass
class Reach:
    on_host: bool  # this process reads the server's data directory (its identity checked)
    why: str  # how that was decided, in one line
    out_of_reach: list[str]  # copies no check from here can see, named
    caveats: list[str] = field(default_factory=list)  # what weakens a host-files scan
    data_dir: Path | None = None


@dataclass
class Settled:
    """What the server did to drop deleted rows from its files before a scan."""

    rewritten: bool  # VACUUM (FULL, ANALYZE) of every table
    statistics: bool  # VACUUM FULL of the statistics catalog (sampled values)
    checkpointed: bool  # CHECKPOINT: old files unlinked, pages written
    notes: list[str] = field(default_factory=list)


class ServerEraser(Protocol):
    def settle(self, tries: int, pause: float) -> Settled:
        """Rewrite the tables without their dead rows, then checkpoint (outside a transaction)."""
        ...

    def reach(self) -> Reach: ...

    def host_files(self) -> dict[str, list[Path]]:
        """{group label: files} to scan on the host ({} when not on it)."""
        ...

    def logical_hits(self, conn: Connection, texts: list[str]) -> dict[str, int]:
        """{table.column: occurrences} of the texts whole in live rows (read through SQL)."""
        ...

    def live_texts(self, conn: Connection, shortest: int) -> list[str]:
        """As the Eraser port's: what a forgotten text may share with live records."""
        ...

    def compressed(self, conn: Connection, selected: dict[str, list[int]]) -> int:
        """Inside the forget's write, before deleting: selected records stored compressed."""
        ...

    # -- read replicas a forget's verification checks (engine/forget/replicas.py) --
    def wal_position(self) -> tuple[str, int | None]:
        """(this server's WAL position now, its system identifier): a standby replayed past it
        holds every commit made before."""
        ...

    def standby_state(self) -> tuple[bool, int | None, str | None]:
        """(in recovery, system identifier, replayed up to) of this server."""
        ...

    def wait_replayed(self, position: str, timeout: float) -> tuple[bool, str | None]:
        """Wait up to `timeout` s until this standby replayed past `position`: (done, where it is)."""
        ...

    def data_nodes(self) -> list[str]:
        """The servers holding the database's rows, named ("this server" on plain PostgreSQL)."""
        ...
