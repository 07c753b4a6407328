"""A would-be proposal (kind, members, evidence) and its fingerprint: same kind, same members, same
member content, same fingerprint."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from engine.curator.types import ProposalKind, TargetKind


@dataclass
class Candidate:
    """A would-be proposal, before it has an id."""

    kind: ProposalKind
    target_kind: TargetKind
    members: list[int]
    survivor_text: str | None
    evidence: dict
    fingerprint: str


def fingerprint(kind: str, target_kind: str, parts: list) -> str:
    """Same kind, same members, same member content -> same fingerprint (so a rejected proposal is
    not proposed again unless its members change)."""
    raw = json.dumps([kind, target_kind, parts], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def content_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
