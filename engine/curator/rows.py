"""Stored curator rows as dataclasses: proposals and runs, plus the forgiving readers the queue uses
to show a member whose stored row holds something odd."""

from __future__ import annotations

from engine.curator import state as curator_state
from engine.curator.types import CuratorRun, Proposal
from engine.types import load_json


def row_to_proposal(r) -> Proposal:
    return Proposal(
        id=r["id"],
        kind=r["kind"],
        target_kind=r["target_kind"],
        status=r["status"],
        members=curator_state.parse_members(r["members"]),
        survivor_text=r["survivor_text"],
        evidence=as_dict(load_json(r["evidence"])),
        created_at=r["created_at"],
        run_id=r["run_id"],
        decided_at=r["decided_at"],
        decided_by=r["decided_by"],
        reason=r["reason"],
        applied_at=r["applied_at"],
        undone_at=r["undone_at"],
        result_id=r["result_id"],
    )


def as_dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def as_text(v) -> str:
    return v if isinstance(v, str) else ("" if v is None else str(v))


def display_num(fn, arg) -> float:
    """A member's strength or score for display; 0.0 when the stored row holds something odd."""
    try:
        v = round(float(fn(arg)), 4)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return v if v == v and abs(v) != float("inf") else 0.0


def run_from_row(r, proposals: list[Proposal]) -> CuratorRun:
    doc = load_json(r["counts"])
    timings = doc.pop("timings", {})
    auto = doc.pop("auto_applied", [])
    return CuratorRun(
        id=r["id"],
        dry_run=bool(r["dry_run"]),
        started_at=r["started_at"],
        finished_at=r["finished_at"] or r["started_at"],
        counts=doc,
        timings=timings,
        proposals=proposals,
        report_dir=r["report_dir"],
        auto_applied=auto,
    )
