"""What an operator does to a forget case besides preview and execute (issues #25, #27): drop
records from its scope, withdraw it, approve it (the two-person rule), accept its residue. Each is
one write with its audit row; the Forget service (engine/forget/service.py) exposes them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.audit import log as audit
from engine.errors import InvalidInput
from engine.forget.cases import query_digest
from engine.forget.seal import discard
from engine.forget.types import ForgetPreview, ForgetRequest
from engine.forget.verify import char_windows, redact
from engine.forget.workflow import (
    OPEN_STATES,
    approvals,
    check_can_approve,
    scope_digest,
    stamp,
    with_excluded,
)

if TYPE_CHECKING:
    from engine.forget.service import Forget
    from engine.storage.port import Connection


def exclude(svc: Forget, request_id: int, items: list[tuple[str, Any]], keep: bool = False) -> ForgetPreview:
    """Drop records ((kind, id): memory, message, rule, session, flow) from an open case's
    scope, or put them back (`keep`), then preview it again: the cascade follows what stays.
    An approval of the earlier scope no longer counts."""
    req = svc.get(request_id)
    if req.status not in OPEN_STATES:
        raise InvalidInput(f"forget request {req.id} is {req.status}; its scope can no longer change")
    if not items:
        raise InvalidInput("name at least one record to drop (kind and id)")
    wf = with_excluded(req, [(str(k), str(i)) for k, i in items], keep)
    now, actor = svc.ctx.clock.now(), svc.ctx.actor

    def write(conn: Connection) -> None:
        conn.forget_requests.set_workflow(req.id, wf)
        audit.append(conn, at=now, actor=actor, action="forget-include" if keep else "forget-exclude",
                     target_kind="forget_request", target_id=req.id,
                     summary={"items": [f"{k}:{i}" for k, i in items]})  # fmt: skip

    svc.store.write(write)
    return svc.preview(req.id)


def withdraw(svc: Forget, request_id: int, reason: str) -> ForgetRequest:
    """Close an open case without removing anything. It leaves the open count and keeps its
    audit trail; a query's text is kept only as its keyed hash from now on (and redacted from
    the request's reason), so a withdrawn case holds no text of what it was about."""
    req = svc.get(request_id)
    if req.status not in OPEN_STATES:
        raise InvalidInput(f"forget request {req.id} is {req.status}; only an open case can be withdrawn")
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("withdrawing a forget request needs a reason")
    now, actor = svc.ctx.clock.now(), svc.ctx.actor
    query = req.scope_kind == "query"
    value = query_digest(req.scope_value) if query else req.scope_value
    kept = redact(req.reason, char_windows([req.scope_value])) if query else req.reason
    why = redact(reason, char_windows([req.scope_value])) if query else reason
    wf = {**req.workflow, "withdrawn": stamp(actor, now, reason=why)}

    def write(conn: Connection) -> None:
        conn.forget_requests.set_workflow(req.id, wf, status="withdrawn", scope_value=value, reason=kept,
                                          selected={})  # fmt: skip
        audit.append(conn, at=now, actor=actor, action="forget-withdraw", target_kind="forget_request",
                     target_id=req.id, reason=why, summary={"scope": req.scope_kind})  # fmt: skip

    svc.store.write(write)
    discard(svc.path, req.selected.get("seal"))
    return svc.get(req.id)


def approve(svc: Forget, request_id: int) -> ForgetRequest:
    """A second operator signs off the case's previewed scope (the two-person rule,
    settings `[forget] approvals = 2`). The requester cannot approve their own case; a new
    preview or a dropped record needs a new approval."""
    req = svc.get(request_id)
    actor, now = svc.ctx.actor, svc.ctx.clock.now()
    check_can_approve(req, actor)
    digest = scope_digest(req.selected)
    wf = {**req.workflow, "approvals": [*approvals(req), stamp(actor, now, scope=digest)]}

    def write(conn: Connection) -> None:
        conn.forget_requests.set_workflow(req.id, wf)
        audit.append(conn, at=now, actor=actor, action="forget-approve", target_kind="forget_request",
                     target_id=req.id, summary={"scope": digest, "counts": req.counts})  # fmt: skip

    svc.store.write(write)
    return svc.get(req.id)


def accept_residue(svc: Forget, request_id: int, reason: str) -> ForgetRequest:
    """Record that an executed case's remaining residue was looked at and accepted (pieces
    shared with live records outside the case's scope): audited with the reason. The case stays
    `executed`: `verified` still means no residue of the forgotten records was found."""
    req = svc.get(request_id)
    if req.status != "executed":
        raise InvalidInput(f"forget request {req.id} is {req.status}; only an executed case with residue"
                           " can have it accepted")  # fmt: skip
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("accepting residue needs a reason")
    now, actor = svc.ctx.clock.now(), svc.ctx.actor
    wf = {**req.workflow, "residue_accepted": stamp(actor, now, reason=reason, residue=req.residue)}

    def write(conn: Connection) -> None:
        conn.forget_requests.set_workflow(req.id, wf)
        audit.append(conn, at=now, actor=actor, action="forget-accept-residue",
                     target_kind="forget_request", target_id=req.id, reason=reason,
                     summary={"residue": req.residue})  # fmt: skip

    svc.store.write(write)
    return svc.get(req.id)
