"""Read model: what a forget case selects, scans and verifies.

Reads across the tables a forget reaches (memories, messages, sessions, rules, flows, proposals,
the audit log), each by a fixed (table, column) named here: column names are never input, every
name is checked against these sets before an adapter builds its SQL."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from engine.storage.gateways.base import Gateway, checked

# table -> the columns read by id (a forget's texts, metadata, tombstones, preview titles)
FIELDS: dict[str, tuple[str, ...]] = {
    "memories": ("content", "metadata", "session_id"),
    "messages": ("content", "metadata", "session_id"),
    "rules": ("text", "metadata"),
    "sessions": ("title", "metadata"),
    "flows": ("name", "metadata"),
}
# table -> the columns a scope selects ids by (a session's, an agent's or a user's records)
OWNERS: dict[str, tuple[str, ...]] = {
    "messages": ("session_id",),
    "memories": ("session_id", "agent", "user"),
    "sessions": ("agent", "user"),
    "rules": ("agent",),
    "flows": ("agent",),
}
# table -> the columns a query scope matches text in
MATCHED: dict[str, tuple[str, ...]] = {
    "memories": ("content", "metadata"),
    "messages": ("content", "tool_name", "metadata"),
    "rules": ("text", "metadata"),
    "flows": ("name", "description", "triggers", "steps", "metadata"),
    "sessions": ("title",),
}


def _table(table: str, allowed: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    if table not in allowed:
        raise ValueError(f"not a table a forget reads this way: {table[:60]}")
    return allowed[table]


class ForgetQueries(Gateway):
    """Read-only views; the caller's connection."""

    # -- by id -------------------------------------------------------------------------------------
    def column_of(self, table: str, column: str, ids: Sequence[Any]) -> list[tuple[Any, Any]]:
        """(id, value) of one column of the rows with these ids (those that exist)."""
        checked([column], _table(table, FIELDS), f"a {table} column read by a forget")
        ids = list(ids)
        return self._column_of(table, column, ids) if ids else []

    def flows_of(self, ids: Sequence[int]) -> list[tuple[Any, ...]]:
        """(id, name, description, triggers, steps) of the flows with these ids."""
        ids = list(ids)
        return self._flows_of(ids) if ids else []

    def existing_memories(self, ids: Sequence[int]) -> set[int]:
        """Which of these memory ids exist."""
        ids = list(ids)
        return self._existing_memories(ids) if ids else set()

    @abstractmethod
    def session_exists(self, session_id: str) -> bool: ...

    def ids_by(self, table: str, column: str, values: Sequence[Any]) -> list[Any]:
        """Ids of the rows whose `column` is one of `values` (a session's messages, an agent's rules)."""
        checked([column], _table(table, OWNERS), f"a {table} column a forget scope selects by")
        values = list(values)
        return self._ids_by(table, column, values) if values else []

    # -- by text (a query scope) -------------------------------------------------------------------
    def text_matches(self, table: str, columns: Sequence[str], patterns: Sequence[str]) -> list[Any]:
        """Ids of the rows where a column matches one of the LIKE `patterns` (backslash escapes;
        ASCII case-insensitive, as SQLite's LIKE)."""
        cols = checked(columns, _table(table, MATCHED), f"a {table} column a forget query matches")
        return self._text_matches(table, cols, list(patterns)) if cols and patterns else []

    def text_rows(self, table: str, columns: Sequence[str]) -> list[tuple[Any, ...]]:
        """(id, *columns) of every row: what a query scope compares folded."""
        cols = checked(columns, _table(table, MATCHED), f"a {table} column a forget query matches")
        return self._text_rows(table, cols)

    def page_owners(self, pages: Sequence[int]) -> dict[int, str]:
        """page number -> the table or index whose b-tree holds it (a file database: SQLite's
        `dbstat`); {} where pages are not the database's own (a server)."""
        return self._page_owners(sorted({int(p) for p in pages})) if pages else {}

    def _page_owners(self, pages: list[int]) -> dict[int, str]:
        return {}

    # -- the cascade -------------------------------------------------------------------------------
    @abstractmethod
    def absorbed_into(self, memory_id: int) -> int | None:
        """The merged memory this memory was absorbed into (None: none, or no such memory)."""

    @abstractmethod
    def sources_of(self, memory_id: int) -> list[int]:
        """The memories absorbed into this merged memory."""

    def promoted_from(self, memory_ids: Sequence[int]) -> list[int]:
        """Rules whose metadata (valid JSON) says `promoted_from` one of these memories (a JSON
        number equal to the id)."""
        ids = list(memory_ids)
        return self._promoted_from(ids) if ids else []

    @abstractmethod
    def proposal_links(self) -> list[tuple[Any, ...]]:
        """(id, target_kind, members, result_id, kind) of every proposal."""

    @abstractmethod
    def proposal_texts(self) -> list[tuple[Any, ...]]:
        """(id, survivor_text, evidence, snapshot) of every proposal: the copies they quote."""

    # -- the audit log (its rows quoting forgotten text; the forget cases' recorded heads) --------
    @abstractmethod
    def audit_texts(self) -> list[tuple[int, Any, Any]]:
        """(id, reason, summary) of every audit row, in id order."""

    @abstractmethod
    def audit_hash(self, audit_id: int) -> str | None:
        """The hash of one audit row, None if the row is gone."""

    # -- the adapter's SQL -------------------------------------------------------------------------
    @abstractmethod
    def _column_of(self, table: str, column: str, ids: list[Any]) -> list[tuple[Any, Any]]: ...

    @abstractmethod
    def _flows_of(self, ids: list[int]) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    def _existing_memories(self, ids: list[int]) -> set[int]: ...

    @abstractmethod
    def _ids_by(self, table: str, column: str, values: list[Any]) -> list[Any]: ...

    @abstractmethod
    def _text_matches(self, table: str, columns: list[str], patterns: list[str]) -> list[Any]: ...

    @abstractmethod
    def _text_rows(self, table: str, columns: list[str]) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    def _promoted_from(self, ids: list[int]) -> list[int]: ...
