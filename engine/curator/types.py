"""Typed records of the curator's queue and the forget cases (what panes, the CLI and tests see)."""
from __future__ import annotations

from dataclasses import dataclass, field

PROPOSAL_KINDS = ("merge", "archive", "promote", "retire")
PROPOSAL_STATUSES = ("pending", "approved", "rejected", "applied", "undone")
FORGET_SCOPES = ("memory", "session", "agent", "user", "query")
FORGET_STATUSES = ("open", "previewed", "executed", "verified")


@dataclass
class Proposal:
    id: int
    kind: str                    # merge | archive | promote | retire
    target_kind: str             # memory | rule
    status: str                  # pending | approved | rejected | applied | undone
    members: list[int]           # memory or rule ids
    survivor_text: str | None    # merge: the text the merged record gets; promote: the rule text
    evidence: dict               # why: similarities, idle days, reinforcement counts
    created_at: float
    run_id: int | None = None
    decided_at: float | None = None
    decided_by: str | None = None
    reason: str | None = None
    applied_at: float | None = None
    undone_at: float | None = None
    result_id: int | None = None  # the merged memory / surviving rule / promoted rule


@dataclass
class ProposalMember:
    id: int
    kind: str                    # memory | rule
    text: str
    state: str                   # memory tier or rule status, now
    strength: float              # memory strength now, or rule score
    agent: str
    exists: bool = True


@dataclass
class ProposalDetail:
    proposal: Proposal
    members: list[ProposalMember]
    similarities: list[list[float | None]]   # pairwise cosine, in member order (None: no vector)
    survivor_id: int | None                  # the member whose text (and settings) the merge keeps


@dataclass
class CuratorRun:
    id: int | None               # None for a dry run (nothing is written)
    dry_run: bool
    started_at: float
    finished_at: float
    counts: dict                 # proposed per kind, skipped, compared, stale
    timings: dict                # seconds per stage
    proposals: list[Proposal]    # the new (or, in a dry run, would-be) proposals
    report_dir: str | None = None
    auto_applied: list[int] = field(default_factory=list)


@dataclass
class ForgetItem:
    kind: str                    # memory | message | session | rule | flow
    id: str
    preview: str                 # shown to the operator in a preview; never stored
    why: str = ""                # selected | derived (merged from it) | session | query match


@dataclass
class ForgetRequest:
    id: int
    scope_kind: str
    scope_value: str             # ids or names; a query's keyed hash ("hmac:...") once executed
    reason: str
    requested_by: str
    requested_at: float
    deadline: float | None
    status: str                  # open | previewed | executed | verified
    selected: dict               # ids per kind chosen for removal; "seal": the sealed texts' token
    # counts: per kind removed, plus "audit_head" [id, hash] of the chain right after the forget
    counts: dict
    residue: int | None          # occurrences of the forgotten text found by the last verification
    executed_at: float | None
    verified_at: float | None


@dataclass
class ForgetPreview:
    request: ForgetRequest
    items: list[ForgetItem]
    counts: dict


@dataclass
class Verification:
    request_id: int
    residue: int                 # must be 0
    files: dict                  # file name -> occurrences found
    checked_texts: int
    checked_substrings: int      # distinctive substrings searched for
    skipped_common: int          # substrings skipped because live content still holds them
    wal_truncated: bool


@dataclass
class ForgetResult:
    request_id: int
    status: str
    counts: dict
    residue: int | None
    verification: Verification | None = None
