"""`forget_requests` rows in PostgreSQL's SQL."""

from __future__ import annotations

from typing import Any

from engine.storage.gateways.forget_requests import ForgetRequestRows
from engine.storage.postgres.gateways.columns import update


class PgForgetRequestRows(ForgetRequestRows):
    def _insert(
        self,
        scope_kind: str,
        scope_value: str,
        reason: str,
        requested_by: str,
        requested_at: float,
        deadline: float,
    ) -> Any:
        got = self.conn.execute(
            "INSERT INTO forget_requests(scope_kind, scope_value, reason, requested_by, requested_at,"
            " deadline, status) VALUES (%s, %s, %s, %s, %s, %s, 'open') RETURNING id",
            (scope_kind, scope_value, reason, requested_by, requested_at, deadline),
        ).fetchall()
        return got[0][0]

    def _update(self, request_id: int, changes: dict[str, Any]) -> None:
        update(self.conn, "forget_requests", request_id, changes, changes, "a forget case column")

    def get(self, request_id: int) -> Any:
        return self.conn.execute("SELECT * FROM forget_requests WHERE id = %s", (request_id,)).fetchone()

    def listed(self, status: str | None, limit: int) -> list[Any]:
        if status:
            return self.conn.execute(
                "SELECT * FROM forget_requests WHERE status = %s ORDER BY id DESC LIMIT %s",
                (status, int(limit)),
            ).fetchall()
        return self.conn.execute(
            "SELECT * FROM forget_requests ORDER BY id DESC LIMIT %s", (int(limit),)
        ).fetchall()

    def open_case(self, scope_kind: str, scope_value: str) -> int | None:
        r = self.conn.execute(
            "SELECT id FROM forget_requests WHERE scope_kind = %s AND scope_value = %s AND status IN"
            " ('open', 'previewed') ORDER BY id DESC LIMIT 1",
            (scope_kind, scope_value),
        ).fetchone()
        return int(r[0]) if r else None

    def executed_count(self) -> int:
        r = self.conn.execute("SELECT count(*) FROM forget_requests WHERE executed_at IS NOT NULL").fetchone()
        return int(r[0]) if r else 0

    def with_audit_head(self, first: int) -> list[tuple[int, str]]:
        # The JSON is read only where it is valid; the head's first element only where it is a number.
        return [
            (int(r[0]), r[1])
            for r in self.conn.execute(
                "SELECT id, counts FROM forget_requests WHERE status IN ('executed', 'verified')"
                " AND (CASE WHEN pg_input_is_valid(counts, 'jsonb')"
                " AND jsonb_typeof(counts::jsonb -> 'audit_head') = 'array'"
                " AND jsonb_typeof(counts::jsonb #> '{audit_head,0}') = 'number'"
                " THEN (counts::jsonb #>> '{audit_head,0}')::numeric >= %s ELSE false END)",
                (first,),
            ).fetchall()
        ]
