"""Read model: the audit trail's walks and views.

Rows come back as the adapter's rows, addressable by index and by column name (`r["hash"]`).
`position` names the column that orders the chain without gaps: `id` on SQLite (one writer,
AUTOINCREMENT, a rolled-back insert gives its id back); `seq` on PostgreSQL, assigned inside the
writing transaction (a sequence value is taken at insert, so a rolled-back insert leaves an id
gap). The `meta` rows the chain relies on (where keying began, the database id) are read here too."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.storage.gateways.base import Gateway
from engine.storage.queries.audit_anchor import AnchorView, composed


@dataclass(frozen=True)
class AuditFilter:
    """Which audit rows `entries` returns: every given condition holds."""

    target_kind: str | None = None
    target_id: str | None = None
    actor: str | None = None
    action: str | None = None  # exact
    action_prefix: str | None = None  # `action` starts with it (case as the backend's LIKE)
    words: Sequence[str] = field(default_factory=tuple)  # each appears (any case) in reason or summary
    since: float | None = None  # at >= since
    until: float | None = None  # at < until
    limit: int = 500
    newest_first: bool = True


def like_literal(text: str) -> str:
    """`text` literal inside a LIKE pattern (escape character: backslash)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class AuditQueries(Gateway):
    """Read-only views; the caller's connection."""

    position: str = "id"  # the column that orders the chain (see the module's docstring)

    def last(self, part: int = 0) -> Any | None:
        """The newest row (every column) of chain `part`, None when it is empty."""
        raise NotImplementedError

    def partitions(self) -> list[int]:
        """The chains that hold rows, ascending ([0] or [] on SQLite: one chain)."""
        raise NotImplementedError

    def heads(self) -> list[tuple[int, int, str]]:
        """(partition, position, hash) of each chain's newest committed row (and this
        transaction's own): what a heads record binds."""
        raise NotImplementedError

    def heads_records(self) -> list[Any]:
        """Every `audit-heads` row (every column), by id."""
        raise NotImplementedError

    def partition_heads(self, at: Sequence[tuple[int, int]] = ()) -> tuple[list[Any], list[Any]]:
        """In one read: every chain's newest committed row, and the rows at the (partition,
        position) pairs `at` (every column): what the head anchor records of each partition and
        checks it still holds (engine/audit/anchor_heads.py). One chain (SQLite): ([], []), the
        anchored head covers it."""
        return [], []

    def head(self) -> Any | None:
        """The newest row's id, hash, at, actor, action, target_kind and target_id (what an
        anchor records; one indexed read), None when the log is empty."""
        raise NotImplementedError

    def row(self, row_id: int) -> Any | None:
        """The row with this id (every column), or None."""
        raise NotImplementedError

    def rows_from(self, start: int = 0) -> list[Any]:
        """Every row with id >= `start` (every column), in id order."""
        raise NotImplementedError

    def chain(self, part: int = 0) -> Iterable[Any]:
        """Every row (every column) of chain `part` in chain order (`position`)."""
        raise NotImplementedError

    def chain_position(self, part: int = 0) -> str:
        """The column of `chain(part)`'s rows that numbers that chain from 1 without gaps."""
        return self.position

    def before(self, row_id: int, part: int = 0) -> tuple[int, str] | None:
        """(position, hash) of the last row of chain `part` before id `row_id`, None when there is none."""
        raise NotImplementedError

    def count(self, *, after: int | None = None, through: int) -> int:
        """How many rows have an id in (after, through] (after None: from the first)."""
        raise NotImplementedError

    def entries(self, f: AuditFilter) -> list[Any]:
        """Rows (every column) matching `f`, by id (newest first unless asked otherwise)."""
        raise NotImplementedError

    def adders(self, target_kind: str, target_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(target_id, actor) of every `add` row of those targets, newest first."""
        raise NotImplementedError

    def texts_of(self, target_kind: str, target_ids: Sequence[str]) -> list[tuple[int, str, str]]:
        """(id, reason, summary) of every row about those targets (the audit_target index): the rows
        a forget of those records redacts without reading the whole log."""
        raise NotImplementedError

    def texts_after(self, after_id: int, limit: int) -> list[tuple[int, str, str]]:
        """(id, reason, summary) of up to `limit` rows with an id above `after_id`, in id order (a
        sweep of the whole log in short reads)."""
        raise NotImplementedError

    def meta_value(self, key: str) -> Any | None:
        """The `meta` row's value (where keying began, the database id), None when absent.
        Raises the driver's error on a file without a meta table."""
        raise NotImplementedError

    def database_path(self) -> str:
        """The main database's file name as the backend opened it ("" when there is none: an
        in-memory database, a server database)."""
        raise NotImplementedError

    def anchor_view(self, after_id: int | None) -> AnchorView:
        """What the anchor reads after each write, in one answer (audit_anchor.py)."""
        return composed(self, after_id)

    def anchor_read(
        self, after_id: int | None, at: Sequence[tuple[int, int]] = ()
    ) -> tuple[AnchorView, list[Any], list[Any]]:
        """`anchor_view` and `partition_heads(at)` in one answer (one snapshot where the adapter
        can: PostgreSQL, one statement): what the anchor reads under its lock."""
        return (self.anchor_view(after_id), *self.partition_heads(at))

    def database_place(self) -> tuple[str, str] | None:
        """(place, instance): where the database lives and which database is there now (a file's
        path and device:inode; a server database's address and oid), None for an in-memory one.
        A new database made at the same place is another instance; a writer of its rows cannot
        change it."""
        raise NotImplementedError
