"""Curator read model in SQLite's SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.queries.curator import CuratorQueries, touched_table
from engine.storage.sqlite.gateways.columns import marks

# A memory's last activity; SQLite's scalar max is NULL when any argument is.
_LAST_ACTIVE = "max(created_at, coalesce(last_accessed_at, 0), last_reinforced_at)"
_IDLE = f"tier = 'active' AND pinned = 0 AND absorbed_into IS NULL AND {_LAST_ACTIVE} < ?"


class SqliteCuratorQueries(CuratorQueries):
    def lock_for_apply(self, proposal_id: int, table: str, member_ids: Sequence[int]) -> None:
        return None  # the writer holds the whole file (BEGIN IMMEDIATE)

    # -- the queue ------------------------------------------------------------------------------
    def proposal(self, proposal_id: int) -> Any | None:
        return self.conn.execute("SELECT * FROM proposals WHERE id = ?", (int(proposal_id),)).fetchone()

    def _proposals(self, ids: Sequence[int]) -> list[Any]:
        return self.conn.execute(
            f"SELECT * FROM proposals WHERE id IN ({marks(len(ids))}) ORDER BY id", list(ids)
        ).fetchall()

    def list_proposals(self, status: str | None, kind: str | None, limit: int) -> list[Any]:
        where, params = ["1=1"], []
        if status:
            where.append("status = ?")
            params.append(status)
        if kind:
            where.append("kind = ?")
            params.append(kind)
        return self.conn.execute(
            f"SELECT * FROM proposals WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?",
            (*params, int(limit)),
        ).fetchall()

    def run_proposal_ids(self, run_id: int) -> list[int]:
        rows = self.conn.execute("SELECT id FROM proposals WHERE run_id = ? ORDER BY id", (run_id,))
        return [int(r[0]) for r in rows]

    def runs(self, limit: int) -> list[Any]:
        return self.conn.execute(
            "SELECT * FROM curator_runs ORDER BY id DESC LIMIT ?", (int(limit),)
        ).fetchall()

    def latest_run(self, finished: bool = False) -> Any | None:
        done = " AND finished_at IS NOT NULL" if finished else ""
        return self.conn.execute(
            f"SELECT * FROM curator_runs WHERE dry_run = 0{done} ORDER BY id DESC LIMIT 1"
        ).fetchone()

    def _texts(self, table: str, ids: Sequence[int]) -> list[Any]:
        col = "content" if touched_table(table) == "memories" else "text"
        return self.conn.execute(
            f"SELECT id, {col}, agent FROM {table} WHERE id IN ({marks(len(ids))})", list(ids)
        ).fetchall()

    def _row(self, table: str, row_id: int) -> Any | None:
        return self.conn.execute(f"SELECT * FROM {touched_table(table)} WHERE id = ?", (row_id,)).fetchone()

    # -- apply and undo -------------------------------------------------------------------------
    def columns(self, table: str) -> set[str]:
        cur = self.conn.execute(f"SELECT * FROM {touched_table(table)} WHERE 1 = 0")
        return {d[0] for d in cur.description}

    # -- member state ---------------------------------------------------------------------------
    def _columns_of(self, table: str, cols: list[str], ids: Sequence[int]) -> list[Any]:
        return self.conn.execute(
            f"SELECT id, {', '.join(cols)} FROM {touched_table(table)} WHERE id IN ({marks(len(ids))})",
            list(ids),
        ).fetchall()

    def audit_mark(self) -> int:
        return int(self.conn.execute("SELECT coalesce(max(id), 0) FROM audit").fetchone()[0])

    def _first_audit_after(
        self, mark: int, target_kind: str, target_ids: list[str], ignoring: list[str]
    ) -> tuple[Any, Any] | None:
        skip = f" AND action NOT IN ({marks(len(ignoring))})" if ignoring else ""
        hit = self.conn.execute(
            f"SELECT target_id, action FROM audit WHERE id > ? AND target_kind = ? AND target_id IN"
            f" ({marks(len(target_ids))}){skip} ORDER BY id LIMIT 1",
            (mark, target_kind, *target_ids, *ignoring),
        ).fetchone()
        return None if hit is None else (hit[0], hit[1])

    # -- the scan -------------------------------------------------------------------------------
    def max_memory_id(self) -> int:
        return int(self.conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0])

    def memory_ids_after(self, watermark: int) -> list[int]:
        return [int(r[0]) for r in self.conn.execute("SELECT id FROM memories WHERE id > ?", (watermark,))]

    def edited_memory_targets(self, since: float) -> list[Any]:
        rows = self.conn.execute(
            "SELECT target_id FROM audit WHERE at >= ? AND target_kind = 'memory'"
            " AND action IN ('edit', 'restore')",
            (since,),
        )
        return [r[0] for r in rows]

    def mergeable_memories(self) -> list[tuple[int, Any]]:
        rows = self.conn.execute(
            "SELECT id, agent FROM memories WHERE tier IN ('core', 'active')"
            " AND absorbed_into IS NULL AND embedded = 1 ORDER BY id"
        )
        return [(r[0], r[1]) for r in rows]

    def unabsorbed_memory_agents(self) -> dict[int, Any]:
        rows = self.conn.execute(
            "SELECT id, agent FROM memories WHERE tier IN ('core', 'active') AND absorbed_into IS NULL"
        )
        return {int(r[0]): r[1] for r in rows}

    def _memory_rows(self, ids: Sequence[int], live: bool) -> list[Any]:
        extra = " AND tier != 'archived' AND absorbed_into IS NULL" if live else ""
        return self.conn.execute(
            f"SELECT * FROM memories WHERE id IN ({marks(len(ids))}){extra}", list(ids)
        ).fetchall()

    def open_rules(self) -> list[Any]:
        return self.conn.execute(
            "SELECT * FROM rules WHERE status != 'retired' AND absorbed_into IS NULL ORDER BY id"
        ).fetchall()

    def idle_memory_count(self, stale_before: float, archive_before: float) -> int:
        return int(
            self.conn.execute(
                f"SELECT count(*) FROM memories WHERE {_IDLE} AND {_LAST_ACTIVE} >= ?",
                (stale_before, archive_before),
            ).fetchone()[0]
        )

    def idle_memories(self, before: float) -> list[Any]:
        return self.conn.execute(
            f"SELECT id, {_LAST_ACTIVE} AS last FROM memories WHERE {_IDLE} ORDER BY id", (before,)
        ).fetchall()

    def _promotable(self, categories: list[str], min_reinforcements: int) -> list[Any]:
        return self.conn.execute(
            f"SELECT * FROM memories WHERE category IN ({marks(len(categories))}) AND tier != 'archived'"
            " AND absorbed_into IS NULL AND access_count >= ? AND NOT EXISTS (SELECT 1 FROM rules"
            " WHERE json_valid(rules.metadata)"
            " AND json_extract(rules.metadata, '$.promoted_from') = memories.id)"
            " ORDER BY id",
            (*categories, min_reinforcements),
        ).fetchall()

    def dormant_rules(self, before: float) -> list[Any]:
        last = "coalesce(last_reinforced_at, created_at)"
        return self.conn.execute(
            f"SELECT *, {last} AS last FROM rules WHERE status = 'dormant' AND pinned = 0 AND {last} < ?"
            " ORDER BY id",
            (before,),
        ).fetchall()

    def fingerprints(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT fingerprint FROM proposals")}

    def pending_memory_merges(self) -> list[tuple[int, Any]]:
        rows = self.conn.execute(
            "SELECT id, members FROM proposals WHERE status = 'pending' AND kind = 'merge'"
            " AND target_kind = 'memory' ORDER BY id"
        )
        return [(int(r[0]), r[1]) for r in rows]
