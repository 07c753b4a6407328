"""What the audit anchor (engine/audit/anchor.py) reads after each committed write, as one answer:
the head row, the database id and keyed-from `meta` rows, the database's place and instance, and,
from the anchored row `after_id` on, that row's hash and how many rows follow it up to the head.
An adapter may answer in one statement (PostgreSQL: one round trip per write instead of six);
`composed` asks the read model's own reads one by one (SQLite: in-process, no round trips)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.storage.queries.audit import AuditQueries

KEYED_FROM_KEY = "audit_keyed_from"  # engine.audit.hashing.KEYED_FROM (the port cannot import it)


@dataclass(frozen=True)
class AnchorView:
    head: Any | None  # id, hash, at, actor, action, target_kind, target_id; None: an empty log
    database_id: Any | None  # the `meta` row as stored (data a writer controls: checked by the anchor)
    keyed_from: Any | None  # the `meta` row as stored
    place: tuple[str, str] | None  # (place, instance), as AuditQueries.database_place
    after_id: int | None  # the anchored row asked about
    after_hash: str | None  # its stored hash (None: no row with that id)
    count: int | None  # rows with an id in (after_id, head id]; None when after_id is None


def _meta(q: AuditQueries, key: str) -> Any | None:
    try:
        return q.meta_value(key)
    except Exception:  # noqa: BLE001 - an older file without a meta table: the anchor decides
        return None


def composed(q: AuditQueries, after_id: int | None) -> AnchorView:
    head = q.head()
    after = q.row(after_id) if after_id is not None else None
    count = q.count(after=after_id, through=head["id"]) if after_id is not None and head is not None else None
    return AnchorView(
        head=head,
        database_id=_meta(q, "database_id"),
        keyed_from=_meta(q, KEYED_FROM_KEY),
        place=q.database_place(),
        after_id=after_id,
        after_hash=None if after is None else after["hash"],
        count=count,
    )
