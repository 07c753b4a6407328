"""Typed records of the curator's queue (what panes, the CLI and tests see)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

ProposalKind = Literal["merge", "archive", "promote", "retire"]
# pending -> approved | rejected; approved -> applied -> undone
ProposalStatus = Literal["pending", "approved", "rejected", "applied", "undone"]
TargetKind = Literal["memory", "rule"]

PROPOSAL_KINDS: tuple[ProposalKind, ...] = get_args(ProposalKind)
PROPOSAL_STATUSES: tuple[ProposalStatus, ...] = get_args(ProposalStatus)


@dataclass
class Proposal:
    id: int
    kind: ProposalKind
    target_kind: TargetKind
    status: ProposalStatus
    members: list[int]  # memory or rule ids
    survivor_text: str | None  # merge: the text the merged record gets; promote: the rule text
    evidence: dict  # why: similarities, idle days, reinforcement counts
    created_at: float
    run_id: int | None = None
    decided_at: float | None = None
    decided_by: str | None = None
    reason: str | None = None
    applied_at: float | None = None
    undone_at: float | None = None
    result_id: int | None = None  # the merged memory / surviving rule / promoted rule


@dataclass
class ProposalRow:
    """A queue row as a list shows it: the proposal, the text it is about, its members' agents."""

    proposal: Proposal
    text: str  # merge/promote: the proposed text; archive/retire: the (first) member's text
    agents: list[str]  # the members' agents, sorted, without duplicates
    stale: str | None = None  # pending but a member changed: the line approval would refuse it with


@dataclass
class ProposalMember:
    id: int
    kind: TargetKind
    text: str
    state: str  # memory tier or rule status, now
    strength: float  # memory strength now, or rule score
    agent: str
    exists: bool = True


@dataclass
class ProposalDetail:
    proposal: Proposal
    members: list[ProposalMember]
    similarities: list[list[float | None]]  # pairwise cosine, in member order (None: no vector)
    survivor_id: int | None  # the member whose text (and settings) the merge keeps


@dataclass
class CuratorRun:
    id: int | None  # None for a dry run (nothing is written)
    dry_run: bool
    started_at: float
    finished_at: float
    counts: dict  # proposed per kind, skipped, compared, stale
    timings: dict  # seconds per stage
    proposals: list[Proposal]  # the new (or, in a dry run, would-be) proposals
    report_dir: str | None = None
    auto_applied: list[int] = field(default_factory=list)
