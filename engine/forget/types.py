"""Typed records of forget cases (what panes, the CLI and tests see)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

ForgetScope = Literal["memory", "session", "agent", "user", "query"]
ForgetStatus = Literal["open", "previewed", "executed", "verified", "withdrawn"]
ForgetKind = Literal["memory", "message", "session", "rule", "flow"]
FORGET_SCOPES: tuple[str, ...] = get_args(ForgetScope)


@dataclass
class ForgetItem:
    kind: ForgetKind
    id: str
    preview: str  # shown to the operator in a preview; never stored
    why: str = ""  # selected | derived (merged from it) | session | query match
    # Where the query's words stand in `preview` (character spans), for highlighting; a query scope only.
    marks: list[tuple[int, int]] = field(default_factory=list)
    excludable: bool = False  # the scope selected it (not the cascade): the operator may drop it


@dataclass
class ForgetRequest:
    id: int
    scope_kind: ForgetScope
    scope_value: str  # ids or names; a query's keyed hash ("hmac:...") once executed
    reason: str
    requested_by: str
    requested_at: float
    deadline: float | None
    status: ForgetStatus
    selected: dict  # ids per kind chosen for removal; "seal": the sealed texts' token
    # counts: per kind removed, plus "audit_head" [id, hash] of the chain right after the forget
    counts: dict
    residue: int | None  # occurrences of the forgotten text found by the last verification
    executed_at: float | None
    verified_at: float | None
    # Who did what to the case and how it matches (engine/forget/workflow.py): ids and names only.
    workflow: dict = field(default_factory=dict)


@dataclass
class ForgetPreview:
    request: ForgetRequest
    items: list[ForgetItem]
    counts: dict
    excluded: dict = field(default_factory=dict)  # kind -> ids the operator dropped from the scope


@dataclass
class Level:
    """One level of a verification: what was checked, where, and what it found. A level that was
    not checked says why, and is never counted as clean."""

    name: str  # logical | host files | engine files | out of reach (a file database: files)
    checked: bool
    residue: int  # occurrences found (0 when not checked: see `checked`)
    found: dict = field(default_factory=dict)  # where -> occurrences (only where found, or files)
    note: str = ""  # how it was checked, or why not


@dataclass
class Verification:
    request_id: int
    residue: int  # must be 0
    files: dict  # file name -> occurrences found
    checked_texts: int
    checked_substrings: int  # distinctive substrings searched for
    skipped_common: int  # substrings skipped because live content still holds them
    wal_truncated: bool  # SQLite: WAL checkpointed and truncated; a server: its tables rewritten
    levels: list[Level] = field(default_factory=list)


@dataclass
class ForgetResult:
    request_id: int
    status: ForgetStatus
    counts: dict
    residue: int | None
    verification: Verification | None = None
