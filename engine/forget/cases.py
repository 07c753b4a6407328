"""A forget case's row and inputs: the request as a dataclass, the scope value a case stores
(memory ids, one session, agent, user or query), the keyed hash a query is kept as, and the items
a preview lists."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.errors import InvalidInput, cut
from engine.forget.match import Matcher, context
from engine.forget.select import Selection
from engine.forget.types import (
    ForgetItem,
    ForgetKind,
    ForgetRequest,
)
from engine.keys import keyed_hash
from engine.types import load_json

if TYPE_CHECKING:
    from engine.storage.port import Connection


def row_to_request(r: Any) -> ForgetRequest:
    return ForgetRequest(
        id=r["id"], scope_kind=r["scope_kind"], scope_value=r["scope_value"], reason=r["reason"],
        requested_by=r["requested_by"], requested_at=r["requested_at"], deadline=r["deadline"],
        status=r["status"], selected=json_object(r["selected"]), counts=json_object(r["counts"]),
        residue=r["residue"], executed_at=r["executed_at"], verified_at=r["verified_at"],
        workflow=json_object(_column(r, "workflow")),
    )  # fmt: skip


def _column(r: Any, name: str) -> Any:
    """A column a database opened read-only before the reconcile added it may lack."""
    try:
        return r[name]
    except (KeyError, IndexError):
        return None


def json_object(raw: Any) -> dict:
    """A case's JSON column as a dict, whatever was written there (it never stops a forget)."""
    v = load_json(raw)
    return v if isinstance(v, dict) else {}


def query_digest(value: str) -> str:
    """What a case and its audit keep of a query: a keyed hash (a plain sha256 of a short query is
    a dictionary lookup away from it)."""
    return "hmac:" + keyed_hash("forget-query", value)


LISTED: tuple[tuple[ForgetKind, str, str], ...] = (
    ("memory", "memories", "content"), ("message", "messages", "content"), ("rule", "rules", "text"),
    ("session", "sessions", "title"), ("flow", "flows", "name"),
)  # fmt: skip


def listed_items(
    conn: Connection, full: Selection, own: Selection | None = None, matcher: Matcher | None = None
) -> list[ForgetItem]:
    """The preview's rows: each record with its text (around the first match of a query, the
    matched words marked), and whether the scope itself selected it (`own`: then the operator may
    drop it; the cascade follows what stays)."""
    out = []
    for kind, table, col in LISTED:
        mine = {str(k) for k, _ in own.listing(kind)} if own is not None else set()
        for tid, why in full.listing(kind):
            r = conn.forget_queries.column_of(table, col, [tid])
            raw = (r[0][1] or "") if r else ""
            spans = matcher.spans(raw) if matcher is not None else []
            text, marks = context(raw, spans, 160)
            out.append(ForgetItem(kind, str(tid), text, why, marks, str(tid) in mine))
    return out


def scope_value(kind: str, values: Any) -> str:
    if kind == "memory":
        vals = values if isinstance(values, (list, tuple, set)) else [values]
        ids = sorted({as_int(v) for v in vals})
        if not ids:
            raise InvalidInput("name at least one memory id")
        return ",".join(map(str, ids))
    if isinstance(values, (list, tuple)):
        if len(values) != 1:
            raise InvalidInput(f"a {kind} scope takes exactly one value")
        values = values[0]
    if not isinstance(values, str) or not values.strip():
        raise InvalidInput(f"a {kind} scope needs a non-empty value")
    if kind == "query" and len(values.strip()) < 3:
        raise InvalidInput("a forget query needs at least 3 characters")
    return values.strip() if kind == "query" else values


def as_int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        raise InvalidInput(f"an id is a whole number, not {cut(v)}") from None
