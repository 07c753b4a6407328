"""Read model: the curator queue's and report's views, and what the curator's scan, its detectors
and apply read (memories, rules, the audit log, proposals, runs). Read-only: the writes go through
the tables' gateways (conn.proposals, conn.curator_runs, conn.memories, conn.rules)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from engine.batches import chunked
from engine.storage.gateways.base import Gateway, checked
from engine.storage.tables import TABLES

# The tables a proposal's members live in (and apply touches), by target kind.
MEMBER_TABLES = {"memory": "memories", "rule": "rules"}
_COLUMNS = {t.name: tuple(c for c, _ in t.columns) for t in TABLES if t.name in ("memories", "rules")}


def member_table(target_kind: str) -> str:
    """`memories` for a memory proposal, `rules` for a rule proposal (ValueError otherwise)."""
    if target_kind not in MEMBER_TABLES:
        raise ValueError(f"not a proposal target kind: {str(target_kind)[:40]}")
    return MEMBER_TABLES[target_kind]


def touched_table(table: str) -> str:
    """`table` if apply may touch it (memories, rules), else ValueError."""
    return checked([table], _COLUMNS, "a table the curator touches")[0]


class CuratorQueries(Gateway):
    """Read-only views; the caller's connection."""

    # -- the queue ------------------------------------------------------------------------------
    def proposal(self, proposal_id: int) -> Any | None:
        """One proposal row (every column), or None."""
        raise NotImplementedError

    def proposal_status(self, proposal_id: int) -> str | None:
        """A proposal's status, or None when there is no such proposal."""
        r = self.proposal(proposal_id)
        return None if r is None else str(r["status"])

    def proposals(self, ids: Iterable[int]) -> list[Any]:
        """The proposal rows with these ids, in id order (ids without a row are left out)."""
        want = sorted({int(i) for i in ids})
        return [r for part in chunked(want) for r in self._proposals(part)] if want else []

    def _proposals(self, ids: Sequence[int]) -> list[Any]:
        """The rows of a non-empty, sorted id list (at most engine.batches.CHUNK), in id order."""
        raise NotImplementedError

    def list_proposals(self, status: str | None, kind: str | None, limit: int) -> list[Any]:
        """Proposal rows, newest first, optionally of one status and/or kind."""
        raise NotImplementedError

    def run_proposal_ids(self, run_id: int) -> list[int]:
        """The ids of the proposals a run made, in order."""
        raise NotImplementedError

    def runs(self, limit: int) -> list[Any]:
        """The newest `limit` runs (rows), newest first."""
        raise NotImplementedError

    def latest_run(self, finished: bool = False) -> Any | None:
        """The last real (not dry) run's row; `finished`: the last one that finished."""
        raise NotImplementedError

    def member_texts(self, target_kind: str, ids: Iterable[int]) -> dict[int, tuple[Any, Any]]:
        """{id: (text, agent)} of the members that exist (a memory's content, a rule's text)."""
        table = member_table(target_kind)
        want = sorted({int(i) for i in ids})
        out: dict[int, tuple[Any, Any]] = {}
        for part in chunked(want):
            for r in self._texts(table, part):
                out[int(r[0])] = (r[1], r[2])
        return out

    def _texts(self, table: str, ids: Sequence[int]) -> list[Any]:
        """(id, text, agent) rows of memories (content) or rules (text) for a non-empty id list."""
        raise NotImplementedError

    def member(self, target_kind: str, member_id: Any) -> Any | None:
        """A memory's or rule's whole row, or None (also for an id that is not a whole number)."""
        table = member_table(target_kind)
        if isinstance(member_id, bool):
            return None
        try:
            mid = int(member_id)
        except (TypeError, ValueError):
            return None
        return self._row(table, mid)

    def _row(self, table: str, row_id: int) -> Any | None:
        """SELECT * of one row of memories or rules."""
        raise NotImplementedError

    # -- apply and undo -------------------------------------------------------------------------
    def lock_for_apply(self, proposal_id: int, table: str, member_ids: Sequence[int]) -> None:
        """Hold the proposal's row and its members' rows (`table`: memories or rules) until the
        write ends, so nothing changes them between the stale check and the apply (issue #24).
        PostgreSQL: SELECT ... FOR UPDATE, the proposal first and the members in id order, so two
        applies never wait on each other in a cycle. SQLite: its writer holds the whole file."""
        raise NotImplementedError

    def touched_row(self, table: str, row_id: int) -> dict[str, Any] | None:
        """A memories or rules row as a dict of every column (what apply snapshots), or None."""
        r = self._row(touched_table(table), int(row_id))
        return None if r is None else dict(r)

    def columns(self, table: str) -> set[str]:
        """The real columns of memories or rules (an undo refuses a snapshot naming others)."""
        raise NotImplementedError

    # -- member state (approval applies only what was proposed) ---------------------------------
    def member_columns(
        self, target_kind: str, ids: Sequence[int], columns: Sequence[str]
    ) -> dict[int, dict[str, Any]]:
        """{id: {column: value}} of the members that exist, `columns` only (checked names)."""
        table = member_table(target_kind)
        cols = checked(columns, _COLUMNS[table], f"a {table} column")
        out: dict[int, dict[str, Any]] = {}
        for part in chunked([int(i) for i in ids]):  # one query per 500 members
            for r in self._columns_of(table, cols, part):
                out[int(r[0])] = dict(zip(cols, list(r)[1:], strict=True))
        return out

    def _columns_of(self, table: str, cols: list[str], ids: Sequence[int]) -> list[Any]:
        """(id, *cols) rows of a non-empty id list; `cols` already checked."""
        raise NotImplementedError

    def audit_mark(self) -> int:
        """The last audit id (0 when the log is empty)."""
        raise NotImplementedError

    def first_audit_after(
        self, mark: int, target_kind: str, target_ids: Sequence[str], ignoring: Sequence[str] = ()
    ) -> tuple[Any, Any] | None:
        """(target_id, action) of the first audit entry after `mark` about one of these targets,
        leaving out the actions in `ignoring`."""
        if not target_ids:
            return None
        return self._first_audit_after(
            int(mark), target_kind, [str(t) for t in target_ids], [str(a) for a in ignoring]
        )

    def _first_audit_after(
        self, mark: int, target_kind: str, target_ids: list[str], ignoring: list[str]
    ) -> tuple[Any, Any] | None:
        raise NotImplementedError

    # -- the scan -------------------------------------------------------------------------------
    def max_memory_id(self) -> int:
        """The highest memory id (0: none): the run's watermark."""
        raise NotImplementedError

    def memory_ids_after(self, watermark: int) -> list[int]:
        """Memories added after the last run's watermark."""
        raise NotImplementedError

    def edited_memory_targets(self, since: float) -> list[Any]:
        """target_id of the audit's memory edits and restores since `since` (as stored: text)."""
        raise NotImplementedError

    def mergeable_memories(self) -> list[tuple[int, Any]]:
        """(id, agent) of every core/active, unabsorbed, embedded memory, in id order."""
        raise NotImplementedError

    def unabsorbed_memory_agents(self) -> dict[int, Any]:
        """{id: agent} of every core/active unabsorbed memory (embedded or not)."""
        raise NotImplementedError

    def memory_rows(self, ids: Iterable[int]) -> dict[int, Any]:
        """{id: row} of these memories (every column)."""
        out: dict[int, Any] = {}
        for part in chunked([int(i) for i in ids]):
            for r in self._memory_rows(part, live=False):
                out[int(r["id"])] = r
        return out

    def live_memory_rows(self, ids: Iterable[int]) -> dict[int, Any]:
        """{id: row} of these memories that are neither archived nor absorbed."""
        out: dict[int, Any] = {}
        for part in chunked([int(i) for i in ids]):
            for r in self._memory_rows(part, live=True):
                out[int(r["id"])] = r
        return out

    def _memory_rows(self, ids: Sequence[int], live: bool) -> list[Any]:
        """SELECT * of a non-empty id list; `live`: not archived, not absorbed."""
        raise NotImplementedError

    def open_rules(self) -> list[Any]:
        """Every rule neither retired nor absorbed (rows), in id order."""
        raise NotImplementedError

    def idle_memory_count(self, stale_before: float, archive_before: float) -> int:
        """Unpinned, unabsorbed active memories whose last activity (the latest of created,
        accessed, reinforced; unknown if created or reinforced is NULL) is before `stale_before`
        and not before `archive_before`: idle, not yet archivable."""
        raise NotImplementedError

    def idle_memories(self, before: float) -> list[Any]:
        """(id, last) rows of unpinned, unabsorbed active memories last active before `before`."""
        raise NotImplementedError

    def promotable_memories(self, categories: Sequence[str], min_reinforcements: int) -> list[Any]:
        """Memory rows of these categories, not archived nor absorbed, accessed at least
        `min_reinforcements` times, that no rule's metadata names as `promoted_from`; id order."""
        if not categories:
            return []
        return self._promotable(list(categories), int(min_reinforcements))

    def _promotable(self, categories: list[str], min_reinforcements: int) -> list[Any]:
        raise NotImplementedError

    def dormant_rules(self, before: float) -> list[Any]:
        """Rule rows (every column plus `last`: reinforced, else created) of unpinned dormant rules
        last active before `before`, in id order."""
        raise NotImplementedError

    def fingerprints(self) -> set[str]:
        """Every proposal's fingerprint, whatever its status."""
        raise NotImplementedError

    def pending_memory_merges(self) -> list[tuple[int, Any]]:
        """(id, members JSON text) of every pending memory merge."""
        raise NotImplementedError
