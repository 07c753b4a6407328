"""Deciding one proposal (`eng.curator.approve` / `undo`): approve and apply it in one
transaction with its members locked and checked unchanged, or restore exactly what its apply
changed; each step audited.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from engine.curator import apply as curator_apply
from engine.curator import state as curator_state
from engine.curator.plan import ApplyPlan, UndoPlan
from engine.curator.types import Proposal
from engine.errors import InvalidInput, NotFound
from engine.memory_input import check_text
from engine.recalls.checks import mark_due
from engine.storage.port import Connection
from engine.types import load_json

if TYPE_CHECKING:
    from engine.curator.service import Curator


def approve(
    curator: Curator,
    proposal_id: int,
    text: str | None = None,
    reason: str = "",
    apply: bool = True,
    plan: ApplyPlan | None = None,
) -> Proposal:
    """Approve (optionally editing the survivor / rule text) and, by default, apply at once.
    `plan`: the plan the operator confirmed (`plan()`); the apply refuses if it differs."""
    r = curator.queue.row(proposal_id)
    if r["status"] != "pending":
        raise InvalidInput(f"proposal {r['id']} is {r['status']}; only a pending proposal can be approved")
    if text is not None:
        if r["kind"] not in ("merge", "promote"):
            raise InvalidInput(f"a {r['kind']} proposal has no text to edit")
        text = check_text(text, "text")
    now = curator.ctx.clock.now()
    vector = vector_for(curator, r, text) if apply else None

    def write(conn: Connection) -> None:
        members = curator_state.parse_members(r["members"])  # held until commit (#24)
        table = "memories" if r["target_kind"] == "memory" else "rules"
        conn.curator_queries.lock_for_apply(r["id"], table, members)
        cur = conn.curator_queries.proposal_status(r["id"])
        if cur != "pending":
            raise InvalidInput(f"proposal {r['id']} is {cur}; only a pending proposal can be approved")
        conn.proposals.approved(r["id"], now, curator.ctx.actor, reason, text)
        curator_apply.record(
            conn,
            curator.ctx.actor,
            r["id"],
            "proposal-approved",
            now,
            reason,
            {
                "kind": r["kind"],
                "members": curator_state.parse_members(r["members"]),
                "edited": text is not None,
            },
        )
        if apply:
            apply_in(curator, conn, r["id"], now, reason, vector, text, plan)

    curator.ctx.store.write(write)
    return curator.queue.proposals([r["id"]])[0]


def vector_for(curator: Curator, r, text: str | None):
    """An edited merge text needs its own vector; compute it before the transaction."""
    if r["kind"] != "merge" or r["target_kind"] != "memory":
        return None
    ev = load_json(r["evidence"])
    base = text if text is not None else r["survivor_text"]
    sid = ev.get("survivor_id")
    surv = curator.ctx.store.query(lambda c: c.curator_queries.member("memory", sid))
    if surv is not None and base == surv["content"]:
        return None  # apply copies the survivor's vector
    emb = curator.ctx.embedder.get()
    return emb.embed([base])[0] if emb is not None else None


def apply_in(
    curator: Curator,
    conn: Connection,
    pid: int,
    now: float,
    reason: str,
    vector,
    text: str | None = None,
    plan: ApplyPlan | None = None,
) -> None:
    row = conn.curator_queries.proposal(pid)
    if row is None:
        raise NotFound(f"no proposal with id {pid}")
    ap = curator_apply.Applier(curator.ctx, curator.memories, conn, row, now, reason)
    result, snapshot = ap.apply(text, vector, plan)
    conn.proposals.applied(pid, now, result, json.dumps(snapshot, ensure_ascii=False))
    mark_due(conn, [*curator_state.parse_members(row["members"]), *([result] if result else [])])  # checks
    curator_apply.record(
        conn,
        curator.ctx.actor,
        pid,
        "proposal-applied",
        now,
        reason,
        {
            "kind": row["kind"],
            "target_kind": row["target_kind"],
            "members": curator_state.parse_members(row["members"]),
            "result_id": result,
        },
    )


def undo(curator: Curator, proposal_id: int, reason: str = "", plan: UndoPlan | None = None) -> Proposal:
    """Restore exactly the state before the apply (refused if a touched row changed since).
    `plan`: the undo plan the operator confirmed (`undo_plan()`); refused if it differs."""
    r = curator.queue.row(proposal_id)
    if r["status"] != "applied":
        raise InvalidInput(f"proposal {r['id']} is {r['status']}; only an applied proposal can be undone")
    now = curator.ctx.clock.now()

    def write(conn: Connection) -> None:
        row = conn.curator_queries.proposal(r["id"])
        if row is None:
            raise NotFound(f"no proposal with id {r['id']}")
        if row["status"] != "applied":
            raise InvalidInput(
                f"proposal {r['id']} is {row['status']}; only an applied proposal can be undone"
            )
        done = curator_apply.undo(conn, row, plan)
        mark_due(
            conn,
            [
                *curator_state.parse_members(row["members"]),
                *([row["result_id"]] if row["result_id"] else []),
            ],
        )  # checks
        conn.proposals.undone(r["id"], now)
        curator_apply.record(
            conn,
            curator.ctx.actor,
            r["id"],
            "proposal-undone",
            now,
            reason,
            {
                "kind": row["kind"],
                "members": curator_state.parse_members(row["members"]),
                "result_id": row["result_id"],
                **done,
            },
        )

    curator.ctx.store.write(write)
    return curator.queue.proposals([r["id"]])[0]
