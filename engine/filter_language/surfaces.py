"""What each listing understands: the keys a filter may use there and the values a key may take.

One language, several surfaces: `kind:` means a memory kind in Search and a proposal kind in the
Curator, so each surface names its own value set. A key a surface cannot apply is refused by name
(never silently ignored): the operator learns which keys work here."""

from __future__ import annotations

from dataclasses import dataclass

from engine.curator.types import PROPOSAL_KINDS, PROPOSAL_STATUSES
from engine.lifecycle.types import RULE_SOURCES, RULE_STATUSES
from engine.types import CATEGORIES, KINDS, TIERS

TIME_KEYS = ("since", "until")
BOOLEAN = ("yes", "no")


@dataclass(frozen=True)
class Surface:
    name: str  # "sessions", "search", "rules", "curator", "audit"
    what: str  # how an error line names it: "the sessions list"
    keys: tuple[str, ...]
    values: dict[str, tuple[str, ...]]  # closed value sets (checked); other keys take any text
    multi: frozenset[str] = frozenset()  # keys that take a comma list ("status:active,dormant")
    # Search queries are prose ("note: deploy on fridays"): there an unknown `word:` that is not
    # near a key is searched as a word (and the hint says so); a near miss (`agnet:`) still fails.
    loose: bool = False


SURFACES: dict[str, Surface] = {
    s.name: s
    for s in (
        Surface("sessions", "the sessions list", ("agent", "user", "source", "since", "until"), {}),
        Surface(
            "search",
            "search",
            ("agent", "user", "tier", "kind", "category"),
            {"tier": (*TIERS, "all"), "kind": KINDS, "category": CATEGORIES},
            frozenset({"tier"}),
            loose=True,
        ),
        Surface(
            "rules",
            "the rules list",
            ("agent", "status", "domain", "source", "pinned"),
            {"status": RULE_STATUSES, "source": RULE_SOURCES, "pinned": BOOLEAN},
            frozenset({"status"}),
        ),
        Surface(
            "curator",
            "the proposal queue",
            ("agent", "status", "kind", "since", "until"),
            {"status": PROPOSAL_STATUSES, "kind": PROPOSAL_KINDS},
        ),
        Surface("audit", "the audit log", ("actor", "action", "target", "since", "until"), {}),
    )
}

ALL_KEYS = frozenset(k for s in SURFACES.values() for k in s.keys)  # a key of the language anywhere
