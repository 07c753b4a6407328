"""No stray key acts: the pane keys that would write at once, and what each needs of a served
operator's role. The app consults these tables for every action a key (or the footer) runs
(MemConsole.run_action), so a pane never has to remember to ask.

- ASK_FIRST: keys that wrote with no question (`r` runs the curator, `p` pins, ...): they now open
  the one confirmation dialog, which says what will change; the action runs only on yes.
- NEEDS_ROLE: in a console started by `memconsole serve` for an operator whose role lacks what a
  key needs, the key does nothing but say which role it needs (one line) and record the refusal in
  the audit log. The engine's own role check (#27 identity work) is the real gate; this one stops
  the key before any dialog opens.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ask:
    title: str
    body: str
    confirm_label: str
    skip_when_marked: bool = False  # the pane's own bulk path (marked rows) already confirms


ASK_FIRST: dict[tuple[str, str, tuple[object, ...]], Ask] = {
    ("curator", "run", (False,)): Ask(
        "Run the curator now?",
        "It scans every memory and rule and writes new proposals (nothing is applied until a "
        "proposal is approved). D makes a dry run that writes nothing.",
        "Run curator",
    ),
    ("search", "pin", ()): Ask(
        "Pin or unpin the selected memory?",
        "A pinned memory stays core and never decays; unpinning lets it decay again.",
        "Pin/unpin",
        skip_when_marked=True,
    ),
    ("rules", "pin", ()): Ask(
        "Pin or unpin the selected rule?",
        "A pinned rule's score and status are frozen (no decay); unpinning lets it decay again.",
        "Pin/unpin",
        skip_when_marked=True,
    ),
    ("rules", "reinforce", ()): Ask(
        "Reinforce the selected rule?",
        "Its score goes up by 1 and its decay clock restarts.",
        "Reinforce",
        skip_when_marked=True,
    ),
    ("rules", "revive", ()): Ask(
        "Revive the selected rule?",
        "A retired rule becomes active again and loads at boot.",
        "Revive",
    ),
}

CURATOR, FORGET, ADMIN = "curator", "forget-officer", "admin"
# The same roles as the engine names them (engine/roles.py Role values).
ENGINE_ROLE = {CURATOR: "curator", FORGET: "forget", ADMIN: "admin"}

NEEDS_ROLE: dict[tuple[str, str], str] = {
    **{
        ("curator", a): CURATOR
        for a in ("approve", "approve_edit", "approve_many", "reject", "reject_many", "undo", "run")
    },
    **{
        ("search", a): CURATOR
        for a in ("pin", "importance", "archive", "restore", "new_memory", "edit_memory")
    },
    ("search", "forget"): FORGET,
    ("search", "pin_check"): CURATOR,  # engine/roles.py checks.add
    **{("rules", a): CURATOR for a in ("add_rule", "pin", "reinforce", "retire", "revive", "set_score")},
    **{("decay", a): CURATOR for a in ("archive_marked", "pin_marked", "run_decay")},
    ("flows", "toggle_status"): CURATOR,
    **{("forget", a): FORGET for a in ("new_request", "preview", "execute", "verify")},
    # case actions (engine/roles.py forget.exclude/withdraw/approve/accept_residue)
    **{("forget", a): FORGET for a in ("drop", "withdraw", "approve", "accept_residue")},
    ("curator", "reject_stale"): CURATOR,
    ("recalls", "pin"): CURATOR,  # engine/roles.py checks.add_from_recall
}


def ask_first(pane_id: str, action: str, params: tuple[object, ...]) -> Ask | None:
    return ASK_FIRST.get((pane_id, action, tuple(params)))


def has_marks(pane: object) -> bool:
    """The pane has rows marked with space (Search and Curator keep `marked`, Rules `marks.keys`):
    its own bulk path asks then, with the count."""
    if getattr(pane, "marked", None):
        return True
    return bool(getattr(getattr(pane, "marks", None), "keys", None))


def role_needed(pane_id: str, action: str) -> str | None:
    return NEEDS_ROLE.get((pane_id, action))
