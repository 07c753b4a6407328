"""The audit anchor's reads after each write in one statement on PostgreSQL (issue #24: was six
round trips per write: head, database id, place, head again, the anchored row, the count). One
snapshot answers all of it, so the count runs exactly to the head it returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.storage.postgres.audit import PLACE_SQL
from engine.storage.postgres.queries.audit import PgAuditQueries
from engine.storage.queries.audit_anchor import KEYED_FROM_KEY, AnchorView

_HEAD_COLS = ("id", "hash", "at", "actor", "action", "target_kind", "target_id")
_PLACE = PLACE_SQL.removeprefix("SELECT ")
# The head's columns, the meta rows, the place (audit.py's PLACE_SQL), the anchored row's hash and
# the rows after it up to the head (only when an anchored row is named: counting a whole log per
# write would cost what the anchor saves).
ANCHOR_VIEW_SQL = (
    "WITH h AS (SELECT id, hash, at, actor, action, target_kind, target_id FROM audit"
    " ORDER BY id DESC LIMIT 1)"
    " SELECT h.id, h.hash, h.at, h.actor, h.action, h.target_kind, h.target_id,"
    " (SELECT value FROM meta WHERE key = 'database_id'),"
    " (SELECT value FROM meta WHERE key = %(keyed)s),"
    f" {_PLACE},"
    " (SELECT hash FROM audit WHERE id = %(after)s),"
    " CASE WHEN %(after)s::bigint IS NULL OR h.id IS NULL THEN NULL ELSE"
    " (SELECT count(*) FROM audit WHERE id > %(after)s AND id <= h.id) END"
    " FROM (SELECT 1) AS one LEFT JOIN h ON true"
)


# The view and every partition's head (queries/audit.py _PARTITION_HEADS) in one statement, so
# one snapshot (issue #24: the anchor read the view, then the heads under its lock). The view's
# columns are renamed v0.. (the rows' own are the audit row's); each row carries the view, then
# `is_head` and an audit row (all NULL when the log is empty).
_VIEW_COLS = ", ".join(f"v{i}" for i in range(15))
ANCHOR_READ_SQL = (
    "WITH RECURSIVE p(part) AS (SELECT min(part) FROM audit UNION ALL"
    " SELECT (SELECT min(part) FROM audit WHERE part > p.part) FROM p WHERE p.part IS NOT NULL),"
    f" v({_VIEW_COLS}) AS ({ANCHOR_VIEW_SQL}),"
    " x AS (SELECT true AS is_head, a.* FROM p CROSS JOIN LATERAL"
    " (SELECT * FROM audit WHERE audit.part = p.part ORDER BY seq DESC LIMIT 1) a"
    " UNION ALL SELECT false, a.* FROM unnest(%(parts)s::bigint[], %(seqs)s::bigint[]) AS k(part, s)"
    " JOIN audit a ON a.part = k.part AND a.seq = k.s)"
    " SELECT v.*, x.* FROM v LEFT JOIN x ON true"
)


class PgAnchorAuditQueries(PgAuditQueries):
    """The audit read model with the anchor's reads in one round trip."""

    def anchor_view(self, after_id: int | None) -> AnchorView:
        r: Any = self.conn.execute(ANCHOR_VIEW_SQL, {"keyed": KEYED_FROM_KEY, "after": after_id}).fetchone()
        return _view(r, after_id)

    def anchor_read(
        self, after_id: int | None, at: Sequence[tuple[int, int]] = ()
    ) -> tuple[AnchorView, list[Any], list[Any]]:
        args = {
            "keyed": KEYED_FROM_KEY,
            "after": after_id,
            "parts": [p for p, _ in at],
            "seqs": [s for _, s in at],
        }
        rows: list[Any] = self.conn.execute(ANCHOR_READ_SQL, args).fetchall()
        heads = [r for r in rows if r["is_head"] is True]
        return _view(rows[0], after_id), heads, [r for r in rows if r["is_head"] is False]


def _view(r: Any, after_id: int | None) -> AnchorView:
    head = None if r[0] is None else dict(zip(_HEAD_COLS, r[:7], strict=True))
    return AnchorView(
        head=head,
        database_id=r[7],
        keyed_from=r[8],
        place=(f"postgresql://{r[9]}:{r[10]}/{r[11]}", str(r[12])),
        after_id=after_id,
        after_hash=r[13],
        count=None if r[14] is None else int(r[14]),
    )
