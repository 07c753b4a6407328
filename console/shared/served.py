"""Who a console started by `memconsole serve` acts as: read from the environment here, nowhere else.

The serve parent verifies a browser user's password (or one-time link) and starts that user's own
console process with two variables set, after removing any value it inherited:

    MEMCONSOLE_OPERATOR=alice       the verified operator (the actor on every audit row)
    MEMCONSOLE_ROLE=curator         viewer | curator | forget-officer | admin

Interim contract for the identity work (#27): until `engine/identity.py` reads these variables
itself, the console opens its engine with `actor=operator` and refuses the curator's write keys to a
role without "curator" (console/app/app.py `served_gate`). The lead wires the engine's own role
check to `served_operator()` at merge, and this file stays the one reader of the variables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

OPERATOR_VAR = "MEMCONSOLE_OPERATOR"
ROLE_VAR = "MEMCONSOLE_ROLE"

ROLES = ("viewer", "curator", "forget-officer", "admin")

# What each role may do beyond reading; admin may do everything.
GRANTS: dict[str, frozenset[str]] = {
    "viewer": frozenset(),
    "curator": frozenset({"curator"}),
    "forget-officer": frozenset({"forget-officer"}),
    "admin": frozenset({"curator", "forget-officer", "admin"}),
}


@dataclass(frozen=True)
class ServedOperator:
    name: str
    role: str

    def may(self, need: str) -> bool:
        """True when this operator's role grants `need` ("curator", "forget-officer", "admin")."""
        return need in GRANTS.get(self.role, frozenset())


def served_operator(environ: Mapping[str, str] | None = None) -> ServedOperator | None:
    """The operator this console process was started for by `memconsole serve`, or None (a console
    run from a terminal). An unknown role reads as viewer: a typo never grants more."""
    env = os.environ if environ is None else environ
    name = (env.get(OPERATOR_VAR) or "").strip()
    if not name:
        return None
    role = (env.get(ROLE_VAR) or "").strip()
    return ServedOperator(name=name, role=role if role in ROLES else "viewer")


def served_environment(base: Mapping[str, str], operator: ServedOperator) -> dict[str, str]:
    """`base` with the operator's variables set (and nothing inherited under their names)."""
    env = {k: v for k, v in base.items() if k not in (OPERATOR_VAR, ROLE_VAR)}
    env[OPERATOR_VAR] = operator.name
    env[ROLE_VAR] = operator.role
    return env
