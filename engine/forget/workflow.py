"""A forget case's workflow beyond its states (issues #25 and #27): how its query matches, which
records the operator dropped from it, its withdrawal, the second operator's approval, residue
accepted with a reason, and who executed it. Kept in the case's `workflow` JSON column: names, ids,
times and keyed hashes, never forgotten text.

The deadline's reading (days left, overdue) lives here too: the pane and the CLI show the same
words."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.clock import DAY
from engine.errors import InvalidInput, Refused, cut
from engine.forget.match import DEFAULT_MODE, MatchMode, check_mode
from engine.forget.select import EXCLUDABLE
from engine.keys import keyed_hash

if TYPE_CHECKING:
    from engine.forget.types import ForgetRequest

OPEN_STATES = ("open", "previewed")


def person(actor: str) -> str:
    """The verified identity inside an audit actor text: "alice (as ops-lead)" -> "alice" (a label
    never makes two operators out of one)."""
    from engine.identity import parse_actor  # the one parser of the actor text

    return parse_actor(actor or "").verified.strip()


def match_mode(req: ForgetRequest) -> MatchMode:
    return check_mode(req.workflow.get("match") or DEFAULT_MODE)


def excluded(req: ForgetRequest) -> dict[str, list[str]]:
    ex = req.workflow.get("excluded")
    return {k: [str(i) for i in v] for k, v in ex.items() if k in EXCLUDABLE} if isinstance(ex, dict) else {}


def with_excluded(req: ForgetRequest, items: list[tuple[str, str]], keep: bool) -> dict:
    """The workflow with `items` ((kind, id)) dropped from the case (or, `keep`, put back)."""
    ex = excluded(req)
    for kind, tid in items:
        if kind not in EXCLUDABLE:
            raise InvalidInput(
                f"a {cut(kind)} cannot be dropped from a case (kinds: {', '.join(EXCLUDABLE)})"
            )
        have = ex.setdefault(kind, [])
        if keep:
            ex[kind] = [i for i in have if i != str(tid)]
        elif str(tid) not in have:
            have.append(str(tid))
    return {**req.workflow, "excluded": {k: sorted(v) for k, v in ex.items() if v}}


# -- deadlines -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Due:
    text: str  # "12 days left" | "1 day left" | "overdue 3 days" | "no deadline" | "closed"
    overdue: bool
    days_left: int | None  # whole days (negative: overdue), None without a deadline or once closed


def due(req: ForgetRequest, now: float) -> Due:
    """How the case stands against its deadline. Only open cases can be overdue."""
    if req.status not in OPEN_STATES:
        return Due("closed", False, None)
    if req.deadline is None:
        return Due("no deadline", False, None)
    left = req.deadline - now
    if left < 0:
        n = max(1, math.ceil(-left / DAY))
        return Due(f"overdue {n} day{'s' if n != 1 else ''}", True, -n)
    days = math.ceil(left / DAY)  # a case opened now with 30 days has "30 days left"
    if days == 0:
        return Due("due now", False, 0)
    return Due(f"{days} day{'s' if days != 1 else ''} left", False, days)


# -- approvals (the two-person rule) --------------------------------------------------------------------
def scope_digest(selected: dict) -> str:
    """A keyed hash of the ids a preview selected: an approval holds for exactly that scope."""
    ids = {k: v for k, v in selected.items() if k not in ("seal", "prints")}
    return keyed_hash("forget-approval", json.dumps(ids, sort_keys=True, default=str))


def approvals(req: ForgetRequest) -> list[dict]:
    got = req.workflow.get("approvals")
    return [a for a in got if isinstance(a, dict)] if isinstance(got, list) else []


def approved_by(req: ForgetRequest) -> list[str]:
    """Who approved the scope as it stands now (an approval of an earlier preview does not count)."""
    now_scope = scope_digest(req.selected)
    return [str(a.get("by")) for a in approvals(req) if a.get("scope") == now_scope]


def check_can_approve(req: ForgetRequest, actor: str) -> None:
    if req.status != "previewed":
        raise InvalidInput(f"forget request {req.id} is {req.status}; only a previewed case can be approved")
    if person(actor) == person(req.requested_by):
        raise Refused(
            f"forget request {req.id}: {person(actor)} requested it; a second operator must approve it"
        )
    if person(actor) in {person(a) for a in approved_by(req)}:
        raise InvalidInput(f"forget request {req.id}: {person(actor)} already approved this scope")


def check_can_execute(req: ForgetRequest, needed: int) -> None:
    """The two-person rule (settings `[forget] approvals = 2`): a case executes only once an
    operator other than the requester approved its previewed scope."""
    if needed < 2:
        return
    if req.status != "previewed":
        raise Refused(f"forget request {req.id} needs a preview and a second operator's approval first")
    others = {person(a) for a in approved_by(req)} - {person(req.requested_by)}
    if not others:
        raise Refused(
            f"forget request {req.id} needs approval by a second operator (not {person(req.requested_by)}):"
            f" forget-request {req.id} --approve"
        )


def stamp(by: str, at: float, **extra: Any) -> dict:
    return {"by": by, "at": at, **extra}
