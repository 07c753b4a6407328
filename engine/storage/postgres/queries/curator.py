"""Curator read model in PostgreSQL's SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.postgres.gateways.columns import ident
from engine.storage.queries.curator import CuratorQueries, touched_table

# A memory's last activity: created_at and last_reinforced_at are NOT NULL, so greatest (which
# skips NULLs) agrees with SQLite's scalar max (NULL when any argument is).
_LAST_ACTIVE = "greatest(created_at, coalesce(last_accessed_at, 0), last_reinforced_at)"
_IDLE = f"tier = 'active' AND pinned = 0 AND absorbed_into IS NULL AND {_LAST_ACTIVE} < %s"

# The memory id each rule's metadata names as `promoted_from` (a JSON number or numeric string),
# as text; metadata that is not JSON names nothing.
_PROMOTED = (
    "SELECT CASE jsonb_typeof(p) WHEN 'number' THEN trim_scale((p #>> '{}')::numeric)::text"
    " WHEN 'string' THEN p #>> '{}' END AS key"
    " FROM (SELECT metadata::jsonb -> 'promoted_from' AS p FROM rules"
    " WHERE pg_input_is_valid(metadata, 'jsonb')) named"
)


class PgCuratorQueries(CuratorQueries):
    def lock_for_apply(self, proposal_id: int, table: str, member_ids: Sequence[int]) -> None:
        t = touched_table(table)  # an identifier from a fixed list, never from input
        self.conn.execute("SELECT id FROM proposals WHERE id = %s FOR UPDATE", (int(proposal_id),)).fetchall()
        ids = sorted({int(i) for i in member_ids})
        self.conn.execute(f"SELECT id FROM {t} WHERE id = ANY(%s) ORDER BY id FOR UPDATE", (ids,)).fetchall()

    # -- the queue ------------------------------------------------------------------------------
    def proposal(self, proposal_id: int) -> Any | None:
        return self.conn.execute("SELECT * FROM proposals WHERE id = %s", (int(proposal_id),)).fetchone()

    def _proposals(self, ids: Sequence[int]) -> list[Any]:
        return self.conn.execute(
            "SELECT * FROM proposals WHERE id = ANY(%s) ORDER BY id", (list(ids),)
        ).fetchall()

    def list_proposals(self, status: str | None, kind: str | None, limit: int) -> list[Any]:
        where, params = ["TRUE"], []
        if status:
            where.append("status = %s")
            params.append(status)
        if kind:
            where.append("kind = %s")
            params.append(kind)
        return self.conn.execute(
            f"SELECT * FROM proposals WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT %s",
            (*params, int(limit)),
        ).fetchall()

    def run_proposal_ids(self, run_id: int) -> list[int]:
        rows = self.conn.execute(
            "SELECT id FROM proposals WHERE run_id = %s ORDER BY id", (run_id,)
        ).fetchall()
        return [int(r[0]) for r in rows]

    def runs(self, limit: int) -> list[Any]:
        return self.conn.execute(
            "SELECT * FROM curator_runs ORDER BY id DESC LIMIT %s", (int(limit),)
        ).fetchall()

    def latest_run(self, finished: bool = False) -> Any | None:
        done = " AND finished_at IS NOT NULL" if finished else ""
        return self.conn.execute(
            f"SELECT * FROM curator_runs WHERE dry_run = 0{done} ORDER BY id DESC LIMIT 1"
        ).fetchone()

    def _texts(self, table: str, ids: Sequence[int]) -> list[Any]:
        col = "content" if touched_table(table) == "memories" else "text"
        return self.conn.execute(
            f"SELECT id, {col}, agent FROM {table} WHERE id = ANY(%s)", (list(ids),)
        ).fetchall()

    def _row(self, table: str, row_id: int) -> Any | None:
        return self.conn.execute(f"SELECT * FROM {touched_table(table)} WHERE id = %s", (row_id,)).fetchone()

    # -- apply and undo -------------------------------------------------------------------------
    def columns(self, table: str) -> set[str]:
        cur = self.conn.execute(f"SELECT * FROM {touched_table(table)} WHERE FALSE")
        return {d[0] for d in cur.description}

    # -- member state ---------------------------------------------------------------------------
    def _columns_of(self, table: str, cols: list[str], ids: Sequence[int]) -> list[Any]:
        return self.conn.execute(
            f"SELECT id, {', '.join(ident(c) for c in cols)} FROM {touched_table(table)} WHERE id = ANY(%s)",
            (list(ids),),
        ).fetchall()

    def audit_mark(self) -> int:
        return int(self.conn.execute("SELECT coalesce(max(id), 0) FROM audit").fetchone()[0])

    def _first_audit_after(
        self, mark: int, target_kind: str, target_ids: list[str], ignoring: list[str]
    ) -> tuple[Any, Any] | None:
        hit = self.conn.execute(
            "SELECT target_id, action FROM audit WHERE id > %s AND target_kind = %s"
            " AND target_id = ANY(%s) AND action <> ALL(%s) ORDER BY id LIMIT 1",
            (mark, target_kind, target_ids, ignoring),
        ).fetchone()
        return None if hit is None else (hit[0], hit[1])

    # -- the scan -------------------------------------------------------------------------------
    def max_memory_id(self) -> int:
        return int(self.conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0])

    def memory_ids_after(self, watermark: int) -> list[int]:
        rows = self.conn.execute("SELECT id FROM memories WHERE id > %s", (watermark,)).fetchall()
        return [int(r[0]) for r in rows]

    def edited_memory_targets(self, since: float) -> list[Any]:
        rows = self.conn.execute(
            "SELECT target_id FROM audit WHERE at >= %s AND target_kind = 'memory'"
            " AND action IN ('edit', 'restore')",
            (since,),
        ).fetchall()
        return [r[0] for r in rows]

    def mergeable_memories(self) -> list[tuple[int, Any]]:
        rows = self.conn.execute(
            "SELECT id, agent FROM memories WHERE tier IN ('core', 'active')"
            " AND absorbed_into IS NULL AND embedded = 1 ORDER BY id"
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def unabsorbed_memory_agents(self) -> dict[int, Any]:
        rows = self.conn.execute(
            "SELECT id, agent FROM memories WHERE tier IN ('core', 'active') AND absorbed_into IS NULL"
        ).fetchall()
        return {int(r[0]): r[1] for r in rows}

    def _memory_rows(self, ids: Sequence[int], live: bool) -> list[Any]:
        extra = " AND tier != 'archived' AND absorbed_into IS NULL" if live else ""
        return self.conn.execute(f"SELECT * FROM memories WHERE id = ANY(%s){extra}", (list(ids),)).fetchall()

    def open_rules(self) -> list[Any]:
        return self.conn.execute(
            "SELECT * FROM rules WHERE status != 'retired' AND absorbed_into IS NULL ORDER BY id"
        ).fetchall()

    def idle_memory_count(self, stale_before: float, archive_before: float) -> int:
        return int(
            self.conn.execute(
                f"SELECT count(*) FROM memories WHERE {_IDLE} AND {_LAST_ACTIVE} >= %s",
                (stale_before, archive_before),
            ).fetchone()[0]
        )

    def idle_memories(self, before: float) -> list[Any]:
        return self.conn.execute(
            f"SELECT id, {_LAST_ACTIVE} AS last FROM memories WHERE {_IDLE} ORDER BY id", (before,)
        ).fetchall()

    def _promotable(self, categories: list[str], min_reinforcements: int) -> list[Any]:
        return self.conn.execute(
            f"WITH promoted AS MATERIALIZED ({_PROMOTED})"
            " SELECT * FROM memories WHERE category = ANY(%s) AND tier != 'archived'"
            " AND absorbed_into IS NULL AND access_count >= %s"
            " AND NOT EXISTS (SELECT 1 FROM promoted WHERE promoted.key = memories.id::text)"
            " ORDER BY id",
            (categories, min_reinforcements),
        ).fetchall()

    def dormant_rules(self, before: float) -> list[Any]:
        last = "coalesce(last_reinforced_at, created_at)"
        return self.conn.execute(
            f"SELECT *, {last} AS last FROM rules WHERE status = 'dormant' AND pinned = 0 AND {last} < %s"
            " ORDER BY id",
            (before,),
        ).fetchall()

    def fingerprints(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT fingerprint FROM proposals").fetchall()}

    def pending_memory_merges(self) -> list[tuple[int, Any]]:
        rows = self.conn.execute(
            "SELECT id, members FROM proposals WHERE status = 'pending' AND kind = 'merge'"
            " AND target_kind = 'memory' ORDER BY id"
        ).fetchall()
        return [(int(r[0]), r[1]) for r in rows]
